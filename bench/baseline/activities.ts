// The baselines' activities: nothing at all, or the time they ran.
export const baselineActivities = {
  async noop(): Promise<void> {},
  async now(): Promise<number> {
    return Date.now();
  },
};

export type BaselineActivities = typeof baselineActivities;
