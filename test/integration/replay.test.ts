// Replays saved histories of real calls, delivery streams and a team pacer against today's workflow code: a change
// that would break calls already running in production (non-determinism) fails here. paced-busy-call.json and
// team-pacer.json were recorded before the pacer granted in bursts from an activity and calls asked for and gave
// back slots from local activities: they replay the old way behind `patched()`. team-pacer-grouped-signals.json has
// the requests and releases that workers send to a pacer several calls to a signal (requestDialSlots, releaseDialSlots).
// paced-completed-call-slot-patches.json is a call placed by `npm start` before `slotsByLocalActivity`: its slot
// request and release took the patches (a marker each), which calls started since skip;
// paced-completed-call-final-with-capture.json is one started since, whose capture also wrote its final status.
// paced-completed-call-streams-end-with-final-event.json is a call with two webhook endpoints that sent its streams
// no noMoreEvents (`streamsEndWithFinalEvent`), and webhook-delivery-ends-with-final-event.json the stream that then
// ended by itself after the call's final event. paced-completed-call-stream-events-by-activity.json is a call whose
// later events reached its two streams from the endpoint lookups (`streamEventsByActivity`), and
// webhook-delivery-events-from-activity.json one of those streams. paced-completed-call-route-with-writes.json is a
// call whose status writes and capture handed their events on themselves (`routeWithWrites`), and
// webhook-delivery-events-from-writes.json its stream of every event. The current-*.json histories were recorded from
// `npm start` on the evening of 2026-11-29 with every input flag new calls carry (completed with webhooks and both its
// streams, busy and redialled, paused and resumed during its redial spacing, voicemail left, scheduled and deleted, a
// file's call paused and resumed, a batch's call cancelled, the team's pacer): the older ones predate most flags and
// would not notice a change to what today's calls do.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { expect, inject, it } from 'vitest';

const dir = path.resolve('test/fixtures/histories');

it('replays every saved history, of calls, webhook delivery streams and a pacer, without non-determinism', async () => {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThan(0);
  // Both workflow types the worker registers have a history here.
  const types = new Set<string>();
  for (const file of files) {
    const history = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
    types.add(history.events[0].workflowExecutionStartedEventAttributes.workflowType.name);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') } },
      history,
      path.basename(file, '.json'),
    );
  }
  expect([...types].sort()).toEqual(['deliverWebhookEventsWorkflow', 'phoneCallWorkflow', 'teamPacerWorkflow']);
});
