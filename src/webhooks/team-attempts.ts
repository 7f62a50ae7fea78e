// How many webhook attempts each team has under way in this worker process. A team whose receiver
// takes requests and never answers holds each attempt for its 15 s: capped per team, its attempts
// leave the rest of the process's slots (WEBHOOK_MAX_CONCURRENT_ATTEMPTS) to other teams' webhooks.

export interface TeamAttempts {
  /** Counts an attempt of the team; null (nothing counted) when the team already has its cap under way. */
  tryStart(teamId: string): (() => void) | null;
  /** Counts an attempt whatever the cap (a stream from before the cap, which cannot wait for it). */
  start(teamId: string): () => void;
}

/** `max` attempts per team at once; 0: no cap. */
export function createTeamAttempts(max: number): TeamAttempts {
  const underWay = new Map<string, number>();
  const start = (teamId: string) => {
    underWay.set(teamId, (underWay.get(teamId) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (underWay.get(teamId) ?? 1) - 1;
      if (left > 0) underWay.set(teamId, left);
      else underWay.delete(teamId);
    };
  };
  return {
    tryStart: (teamId) => (max > 0 && (underWay.get(teamId) ?? 0) >= max ? null : start(teamId)),
    start,
  };
}
