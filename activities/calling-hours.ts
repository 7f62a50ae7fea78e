// The calling-hours check, as an activity: zone rules are data that changes with tzdata releases, so
// the answer is recorded in the workflow's history instead of being computed in workflow code.
import { checkCallingWindow, type CallingWindow, type WindowCheck } from '../src/calling-hours/calling-window';

export function createCallingHoursActivities() {
  return {
    async checkCallingHours(input: { window: CallingWindow; timeZones: string[]; at: string }): Promise<WindowCheck> {
      return checkCallingWindow(input.window, input.timeZones, Date.parse(input.at));
    },
  };
}
