// Task-queue priority: Temporal's priority keys, 1 served first and 5 last (3 when none is given).
// The call workflows and the teams' pacers share one task queue, served first in, first out: a bulk
// create's backlog (its calls' first workflow tasks, their events' delivery streams, their activities)
// held up a call created alone behind it for minutes, where decisions.md has a call due now placed at
// once. Keyed, a call made alone goes ahead of a batch's or a file's, and a pacer ahead of both (its
// grants are what every due call waits on). Activities and child workflows (the delivery streams)
// inherit their workflow's key; workflows started before keys existed keep 3.
//
// The server must run its priority matcher (dynamic config `matching.useNewMatcher`, set by
// src/local/servers.ts and docker-compose.yml); a server without it ignores the keys, as before.
import type { Priority } from '@temporalio/common';
import type { CallOrigin } from '../data/models/phone-call';

/** A team's pacer: every call due waits on its grants. */
export const PACER_PRIORITY: Priority = { priorityKey: 1 };

/** A call made alone (`POST /v1/phoneCalls`, or the operator's `calls create`) ahead of a batch's or a file's. */
export function callPriority(origin: CallOrigin): Priority {
  return { priorityKey: origin === 'api' ? 2 : 4 };
}
