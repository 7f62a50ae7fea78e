// The zone a callee's spoken meeting time ("Tuesday at 3pm") is read in: the callee's own, as far as
// the call tells it. Calling hours (src/calling-hours) may honour every zone a number spans; a meeting
// time names one instant, so a number in several zones (toll-free, non-geographic) tells nothing and
// the template's zone stands in.
import { timeZonesOfNumber } from '../calling-hours/callee-time-zones';

export interface MeetingTimeZoneSources {
  /** The create's `calleeTimeZone`: what the client says of its callee comes first. */
  calleeTimeZone?: string | null;
  toPhoneNumber: string;
  /** The call template's `timeZone`. */
  templateTimeZone?: string | null;
}

/** `calleeTimeZone`, else the number's zone when it has exactly one, else the template's, else UTC. */
export async function meetingTimeZone(sources: MeetingTimeZoneSources): Promise<string> {
  if (sources.calleeTimeZone) return sources.calleeTimeZone;
  // Looked up rather than taken from the call's `calleeTimeZones`: those are stored only for a
  // template with calling hours, and there hold the template's zone for a number without zone data.
  const zones = await timeZonesOfNumber(sources.toPhoneNumber);
  if (zones.length === 1) return zones[0]!;
  return sources.templateTimeZone || 'UTC';
}
