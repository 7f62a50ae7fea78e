// The API is SIGKILLed while a batch request is in flight, a new API is started, and the client
// retries the same request with the same Idempotency-Key until it gets its 201, as a careful client
// does. Then: exactly one batch's worth of calls exists (counted by the batch's own fileId), each
// element once, the 201's ids are the stored ids, and every call gets a workflow. The calls are
// scheduled 30 days ahead and then cancelled through the file control, so every one of them has a
// definite end to check too: deleted, its workflow closed, its `phoneCall.deleted` delivered.
import { CALL_EVENT_NAMES } from '../../src/contracts/events';
import { PROVIDERS } from '../../src/contracts/providers';
import { describeAnswer, sleep, type HttpAnswer } from './http';
import { callsWithWorkflows, storedCalls, waitUntilSettled } from './observe';
import { seedTeam, subscribeWebhook, uniqueNumber } from './population';
import { observeAndCheck, ScenarioRun, type Harness, type ScenarioResult } from './scenario-run';

const NAME = 'api-killed-mid-batch';
// The ends a call of this batch can have: cancelled by the file control, or deleted while queued.
const SUBSCRIBED = CALL_EVENT_NAMES.filter(
  (name) => !['phoneCall.queued', 'phoneCall.ringing', 'phoneCall.inProgress', 'transcript.created'].includes(name),
);

export async function apiKilledMidBatch(h: Harness): Promise<ScenarioResult> {
  const run = new ScenarioRun(NAME, h);
  const { timing } = h.options;
  try {
    const team = await seedTeam({
      name: `chaos ${NAME}`,
      apiUrl: () => h.stack.apiUrl,
      encryptionKey: h.stack.encryptionKey,
      vonageSignatureSecret: h.stack.vonageSignatureSecret,
      telnyxPublicKey: h.stack.telnyxPublicKey,
    });
    run.team = team;
    const path = `/hooks/${NAME}`;
    const events = () => h.receiver.events(path);
    await subscribeWebhook(team, `${h.receiver.url}${path}`, SUBSCRIBED);

    // Its own fileId: every record of this batch (and of any second copy of it) is found by it.
    const fileId = `chaos-${h.runId}-batch`;
    const farFuture = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const elements = Array.from({ length: h.options.batchSize }, (_, i) => `${NAME}#${i}`);
    const body = {
      fileId,
      fileName: 'chaos-batch.csv',
      phoneCalls: elements.map((element, i) => ({
        teamId: team.teamId,
        callTemplateId: team.templateId,
        toPhoneNumber: uniqueNumber('busy'),
        nameOfHuman: element,
        promptVariableValues: [{ key: 'firstName', value: 'Lin' }],
        telephonyProvider: PROVIDERS[i % PROVIDERS.length],
        callDelayedUntil: farFuture,
      })),
    };
    const headers = { 'Idempotency-Key': fileId };
    const post = () => team.api.post('/v1/phoneCalls/batch', body, headers);

    // The kill: a moment after the batch's first records are stored (mid-write, where a half-made batch
    // can be left), or batchKillWithinMs after sending if none are by then.
    const sentAt = Date.now();
    const first = post();
    let firstAnswer: HttpAnswer | null = null;
    void first.then((answer) => (firstAnswer = answer));
    const killAt = sentAt + timing.batchKillWithinMs;
    let storedAtKill = 0;
    while (Date.now() < killAt && !firstAnswer) {
      storedAtKill = (await storedCalls({ teamId: team.teamId, fileId })).length;
      if (storedAtKill > 0) break;
      await sleep(20);
    }
    if (storedAtKill > 0) await sleep(200 * h.random());
    await h.stack.api.kill('SIGKILL');
    const killedAfterMs = Date.now() - sentAt;
    const answer = await first;
    storedAtKill = (await storedCalls({ teamId: team.teamId, fileId })).length;
    if (answer.status === 0) run.injected += 1;
    run.note(
      answer.status === 0
        ? `SIGKILL to the API ${killedAfterMs} ms after sending ${elements.length} calls; ${storedAtKill} of them were stored then`
        : `the request was answered ${describeAnswer(answer)} before the kill (${killedAfterMs} ms): no fault injected`,
    );

    await h.stack.startApi();
    const retried = await retryUntilCreated(post, timing.batchRetryDeadlineMs);
    const replayed = retried.answer.headers.get('idempotent-replayed') === 'true' ? ' (Idempotent-Replayed)' : '';
    run.note(
      `a new API answered the same request ${describeAnswer(retried.answer)}${replayed} after ${retried.tries} ` +
        `tries in ${(retried.ms / 1000).toFixed(1)} s` +
        (retried.statuses.size ? ` (answers on the way: ${[...retried.statuses].join(', ')})` : ''),
    );
    const created = retried.answer.status === 201 ? retried.answer : answer.status === 201 ? answer : null;
    const accepted = new Map<string, string>();
    if (created) {
      const data = (created.body as { data: { _id: string; nameOfHuman?: string }[] }).data;
      data.forEach((call, i) => accepted.set(call._id, elements[i] ?? `(extra answer element ${i})`));
      if (data.length !== elements.length)
        run.errors.push(`the 201 names ${data.length} calls for ${elements.length} elements`);
      const outOfOrder = data.filter((call, i) => call.nameOfHuman !== elements[i]).length;
      if (outOfOrder) run.errors.push(`${outOfOrder} calls of the 201 are not in request order`);
    } else {
      run.errors.push(
        `no 201 within ${timing.batchRetryDeadlineMs / 1000} s of retrying (last: ${describeAnswer(retried.answer)})`,
      );
    }
    run.accepted = accepted.size;

    // Every stored call gets a workflow: the API started it, or the worker's reconciler does for a
    // batch left pending (after RECONCILE_AFTER_SECONDS).
    const workflowDeadline = Date.now() + Math.max(30_000, timing.settleDeadlineMs / 2);
    let stored = await storedCalls({ teamId: team.teamId, fileId });
    let withWorkflow = new Set<string>();
    for (;;) {
      stored = await storedCalls({ teamId: team.teamId, fileId });
      withWorkflow = await callsWithWorkflows(
        h.stack.temporal,
        team.teamId,
        stored.map((c) => c._id),
      );
      if (stored.every((c) => withWorkflow.has(c._id)) || Date.now() > workflowDeadline) break;
      await sleep(1_000);
    }
    const perElement = new Map<string, number>();
    for (const call of stored) perElement.set(call.element ?? '?', (perElement.get(call.element ?? '?') ?? 0) + 1);
    const twice = [...perElement.values()].filter((n) => n > 1).length;
    run.note(
      `${stored.length} calls stored under the batch's fileId for ${elements.length} elements ` +
        `(${twice} elements stored more than once); ${withWorkflow.size} of them have a workflow`,
    );
    for (const call of stored.filter((c) => !withWorkflow.has(c._id)))
      run.findings.lost.push(`call ${call._id} (${call.element}): stored, but no workflow was ever started for it`);

    // The end of every call: cancel the whole file (any second copy of the batch included).
    const cancelSentAt = Date.now();
    const cancel = await team.api.post(`/v1/phoneCalls/file/${encodeURIComponent(fileId)}/cancel`);
    run.note(
      `POST /v1/phoneCalls/file/{fileId}/cancel answered ${describeAnswer(cancel)} after ` +
        `${((Date.now() - cancelSentAt) / 1000).toFixed(1)} s: ${JSON.stringify(cancel.body?.data ?? '')}`,
    );
    const settled = await waitUntilSettled({
      scope: { teamId: team.teamId, fileId },
      events,
      // Deleting and reporting thousands of calls takes time of its own (about 10 a second on 2 cores).
      deadlineMs: Math.max(timing.settleDeadlineMs, stored.length * 200),
      expectGone: new Set(stored.map((c) => c._id)),
    });
    if (settled.settled)
      run.note(`every call deleted and its phoneCall.deleted delivered within ${settled.seconds.toFixed(1)} s`);
    await observeAndCheck(run, {
      team,
      accepted,
      receiverEvents: events,
      settled,
      fileId,
      seenStored: stored,
      deletedByScenario: new Set(stored.map((c) => c._id)),
    });
  } catch (err) {
    run.fail(err);
  }
  return run.finish();
}

/**
 * The same request again until it is created: a 429 (the first request still holds the key) after
 * its Retry-After, no answer or a 5xx after a short wait; another 4xx ends it (a 400 would say the
 * key was used with another body).
 */
async function retryUntilCreated(
  post: () => Promise<HttpAnswer>,
  deadlineMs: number,
): Promise<{ answer: HttpAnswer; tries: number; ms: number; statuses: Set<string> }> {
  const started = Date.now();
  const statuses = new Set<string>();
  for (let tries = 1; ; tries++) {
    const answer = await post();
    const done = answer.status === 201 || (answer.status >= 400 && answer.status < 500 && answer.status !== 429);
    if (done || Date.now() - started > deadlineMs) return { answer, tries, ms: Date.now() - started, statuses };
    statuses.add(answer.status === 0 ? 'no answer' : String(answer.status));
    const retryAfter = Number(answer.headers.get('retry-after'));
    await sleep(answer.status === 429 && retryAfter > 0 ? retryAfter * 1000 : 500);
  }
}
