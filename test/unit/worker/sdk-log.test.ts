// The SDK's log entries as the worker writes them: an activity's failure says what went wrong.
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURES } from '../../../src/contracts/failures';
import { createLogger } from '../../../src/logger';
import { sdkLogFunction } from '../../../src/worker/create-worker';

/** The worker's logger, writing its lines here. */
function capturingLog() {
  const lines: Record<string, any>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, any>);
      done();
    },
  });
  return { log: sdkLogFunction(createLogger('debug', 'worker', { destination })), lines };
}

const activityFailed = (error: unknown) => ({
  level: 'WARN' as const,
  message: 'Activity failed',
  meta: { activityType: 'dialCall', attempt: 3, error, durationMs: 41 },
  timestampNanos: 0n,
});

describe("the SDK's log lines", () => {
  it("carry a failed activity's error message, stack and cause", () => {
    const { log, lines } = capturingLog();
    log(activityFailed(new TypeError("Cannot read properties of undefined (reading 'includes')")));
    log(activityFailed(new Error('telnyx dial failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') })));

    expect(lines[0]).toMatchObject({ level: 40, msg: 'Activity failed' });
    expect(lines[0]!.sdk).toMatchObject({ activityType: 'dialCall', attempt: 3, durationMs: 41 });
    expect(lines[0]!.sdk.error).toMatchObject({
      type: 'TypeError',
      message: "Cannot read properties of undefined (reading 'includes')",
      stack: expect.stringMatching(/^TypeError: Cannot read properties.*\n\s+at /),
    });
    expect(lines[1]!.sdk.error.message).toBe('telnyx dial failed: connect ECONNREFUSED 127.0.0.1:9');
    expect(lines[1]!.sdk.error.stack).toContain('caused by: Error: connect ECONNREFUSED 127.0.0.1:9');
  });

  it("say a Worker without workflows at info: the webhook attempts' Worker has none by design", () => {
    const { log, lines } = capturingLog();
    const noWorkflows = 'No workflows registered, not polling for workflow tasks';
    log({ level: 'WARN', message: noWorkflows, meta: { taskQueue: 'phone-calls-webhooks' }, timestampNanos: 0n });
    log({ level: 'WARN', message: 'Something else', meta: {}, timestampNanos: 0n });
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [30, noWorkflows],
      [40, 'Something else'],
    ]);
  });

  it("keep an ApplicationFailure's own type and whether it is retried", () => {
    const { log, lines } = capturingLog();
    log(
      activityFailed(
        ApplicationFailure.create({
          type: FAILURES.providerNotConfigured,
          message: 'team 665f1c2e8b3e4a0012345678 has no telnyx credentials',
          nonRetryable: true,
        }),
      ),
    );
    expect(lines[0]!.sdk.error).toMatchObject({
      type: 'ApplicationFailure',
      failureType: 'PROVIDER_NOT_CONFIGURED',
      nonRetryable: true,
      message: 'team 665f1c2e8b3e4a0012345678 has no telnyx credentials',
    });
  });

  it('pass other fields as they are, and an entry without fields with none', () => {
    const { log, lines } = capturingLog();
    log({ level: 'INFO', message: 'Worker state changed', meta: { state: 'RUNNING' }, timestampNanos: 0n });
    log({ level: 'ERROR', message: 'Worker failed', timestampNanos: 0n });
    expect(lines[0]).toMatchObject({ level: 30, msg: 'Worker state changed', sdk: { state: 'RUNNING' } });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'Worker failed' });
    expect(lines[1]).not.toHaveProperty('sdk');
  });
});
