// One time-skipping environment per test file; a worker per test with stub activities that record
// what the workflow asked of them. Workflow ids are unique per test.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import type { Activities } from '../../activities';
import { phoneCallWorkflow } from '../../workflows/call';
import { providerEventSignal } from '../../workflows/messages';
import type { CallWorkflowInput, CallWorkflowState } from '../../workflows/types';
import { callWorkflowId } from '../../src/contracts/ids';
import { FAILURES } from '../../src/contracts/failures';
import type { AnsweredBy } from '../../src/contracts/machine-detection';
import type { ProviderEvent, ProviderEventKind } from '../../src/contracts/providers';
import type { StatusChange } from '../../src/data/call-store';
import { createCallingHoursActivities } from '../../activities/calling-hours';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/contracts/search-attributes';
import { temporal } from '@temporalio/proto';

let runtimeInstalled = false;

/** The SDK's own log kept to errors (worker state changes, failures tests provoke); once per process. */
export function installQuietRuntime(): void {
  if (!runtimeInstalled) {
    // Workflow failures are what several tests provoke: keep the SDK's own log to errors.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} },
      },
    });
    runtimeInstalled = true;
  }
}

export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: inject('timeSkippingServerPath') } },
  });
  // The call workflow keeps its custom search attributes current, as on the real server.
  const types = {
    Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  };
  await env.connection.operatorService
    .addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTE_DEFINITIONS.map(({ name, type }) => [name, types[type]])),
    })
    .catch(() => undefined);
  return env;
}

/**
 * Registers a time-skipping environment for the calling test file: one for the whole file, or a fresh
 * one per test where each test moves the clock far (`'test'`). The answer stands for whichever is
 * current, so a file declares it once: `const env = useTimeSkippingEnvironment();`.
 */
export function useTimeSkippingEnvironment(scope: 'file' | 'test' = 'file'): TestWorkflowEnvironment {
  let current: TestWorkflowEnvironment | undefined;
  (scope === 'file' ? beforeAll : beforeEach)(async () => {
    current = await timeSkippingEnvironment();
  });
  (scope === 'file' ? afterAll : afterEach)(async () => {
    await current?.teardown();
    current = undefined;
  });
  return new Proxy({} as TestWorkflowEnvironment, {
    get(_, property) {
      if (!current) throw new Error('the time-skipping environment is used outside a test');
      const value: unknown = Reflect.get(current, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
}

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

/** A call workflow's input for a new call (a 30 s ring timeout: the stubbed dials are never answered). */
export function callWorkflowInput(overrides: Partial<CallWorkflowInput> = {}): CallWorkflowInput {
  return {
    callId: uniqueId('call'),
    teamId: uniqueId('team'),
    toPhoneNumber: '+12125550123',
    provider: 'twilio',
    record: false,
    scheduledFor: null,
    maxDurationSeconds: 900,
    ringTimeoutSeconds: 30,
    ...overrides,
  };
}

export type Calls = Array<{ name: keyof Activities; input: unknown }>;

/** Activities that succeed at once and record their calls; a test overrides what it needs. */
export function stubActivities(overrides: Partial<Activities> = {}): { activities: Activities; calls: Calls } {
  const calls: Calls = [];
  const record =
    <K extends keyof Activities>(name: K, answer: (input: Parameters<Activities[K]>[0]) => ReturnType<Activities[K]>) =>
    (input: Parameters<Activities[K]>[0]) => {
      calls.push({ name, input });
      return answer(input);
    };
  const activities: Activities = {
    resolveWebhookTargets: record('resolveWebhookTargets', async () => ({
      targets: [],
      retryDelaysMs: [],
      call: null,
    })),
    routeWebhookEvent: record('routeWebhookEvent', async () => ({
      handedTo: [],
      newStreams: [],
      event: null,
      retryDelaysMs: [],
    })),
    recordStatus: record('recordStatus', async (change) => ({
      applied: true,
      call: { _id: change.callId, status: change.status },
    })),
    deleteCallRecord: record('deleteCallRecord', async ({ callId }) => ({
      deletedCall: { _id: callId, status: 'queued' },
      ownTargets: [],
    })),
    // As the real dial: the move to ringing written with it when the workflow asks.
    dialCall: record('dialCall', async ({ callId, ringing }) => ({
      providerCallId: `pc-${callId}`,
      ...(ringing ? { ringing: { applied: true, call: { _id: callId, status: 'ringing' } } } : {}),
    })),
    hangUpCall: record('hangUpCall', async ({ providerCallId }) => providerCallId ?? null),
    // The provider has nothing new to say: the call still rings.
    pollCallEvents: record('pollCallEvents', async () => []),
    leaveVoicemail: record('leaveVoicemail', async () => undefined),
    // As the real capture: the final status written with the results when the workflow asks.
    captureCallOutputs: record('captureCallOutputs', async ({ final }) => ({
      transcriptEvent: null,
      ...(final ? { final: { applied: true, call: { _id: final.callId, status: final.status } } } : {}),
    })),
    attemptWebhookDelivery: record('attemptWebhookDelivery', async () => ({ ok: true, gone: false })),
    recordAttemptNotMade: record('recordAttemptNotMade', async () => undefined),
    recordQueuedStatusCode: record('recordQueuedStatusCode', async () => undefined),
    // The real check: it is pure, and the time-skipping clock is what the workflow passes it.
    checkCallingHours: record('checkCallingHours', createCallingHoursActivities().checkCallingHours),
    // Pacing: a test that paces calls runs the real pacer activities (pacerActivities below).
    requestDialSlot: record('requestDialSlot', async () => undefined),
    readPacingLimits: record('readPacingLimits', async () => ({
      maxConcurrentCalls: 10,
      dialsPerSecond: { twilio: 1, vonage: 3, telnyx: 1 },
    })),
    spillWaiters: record('spillWaiters', async () => undefined),
    loadSpilledWaiters: record('loadSpilledWaiters', async () => []),
    dropSpilledWaiters: record('dropSpilledWaiters', async () => undefined),
    clearSpilledWaiters: record('clearSpilledWaiters', async () => undefined),
    forgetSpilledWaiters: record('forgetSpilledWaiters', async () => undefined),
    findEndedCalls: record('findEndedCalls', async () => []),
    deliverDialGrants: record('deliverDialGrants', async () => []),
    releaseDialSlot: record('releaseDialSlot', async () => undefined),
  };
  for (const [name, fn] of Object.entries(overrides) as Array<[keyof Activities, (...args: never[]) => unknown]>) {
    // Every argument passed on (recordStatus takes a route after its change); the first is recorded.
    (activities as Record<string, unknown>)[name] = (...args: never[]) => {
      calls.push({ name, input: args[0] });
      return fn(...args);
    };
  }
  return { activities, calls };
}

export async function workerFor(
  env: TestWorkflowEnvironment,
  activities: Activities,
  taskQueue: string,
): Promise<Worker> {
  return Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
}

/** Runs a call workflow (id `phoneCall-<callId>`) to its end on a task queue of its own, with `activities`. */
export async function runCallWorkflow(
  env: TestWorkflowEnvironment,
  activities: Activities,
  args: CallWorkflowInput,
): Promise<CallWorkflowState> {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  return worker.runUntil(
    env.client.workflow.execute(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    }),
  );
}

/** The status changes the workflow asked recordStatus to write, in order. */
export const statusChanges = (calls: Calls): StatusChange[] =>
  calls.filter((c) => c.name === 'recordStatus').map((c) => c.input as StatusChange);

export type ProviderScript = Array<{ kind: ProviderEventKind; answeredBy?: AnsweredBy }>;

/** Signals a provider call's events to its call workflow, the way the callback routes signal them. */
export async function signalProviderEvents(
  env: TestWorkflowEnvironment,
  callId: string,
  providerCallId: string,
  script: ProviderScript,
): Promise<void> {
  const handle = env.client.workflow.getHandle(callWorkflowId(callId));
  for (const step of script) {
    const event: ProviderEvent = {
      callId,
      provider: 'twilio',
      providerCallId,
      kind: step.kind,
      occurredAt: new Date().toISOString(),
      providerStatus: step.kind,
      ...(step.answeredBy ? { answeredBy: step.answeredBy } : {}),
    };
    await handle.signal(providerEventSignal, event);
  }
}

/** What the dial throws for a 429 that asks for `retryAfterMs`, on the dial activity's try `attempt`. */
export function rateLimited(retryAfterMs: number, attempt = 1): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURES.providerRateLimited,
    message: 'rate limited',
    details: [retryAfterMs, attempt],
    nonRetryable: true,
  });
}
