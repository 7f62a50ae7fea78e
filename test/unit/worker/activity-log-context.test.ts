import { Writable } from 'node:stream';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ActivityCallIdFromInput, activityLogContext } from '../../../src/worker/activity-log-context';

const CALL_ID = '665f1c2e8b3e4a0012345678';

/** A logger with the worker's context that writes its lines here. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ mixin: activityLogContext }, sink);
  return { logger, lines };
}

describe('activityLogContext', () => {
  it.each([
    [`phoneCall-${CALL_ID}`, CALL_ID],
    [`webhookDelivery-${CALL_ID}-call-0`, CALL_ID],
    ['teamPacer-665f1c2e8b3e4a0012345679', undefined],
  ])('names the call and workflow of an activity run by %s', async (workflowId, phoneCallId) => {
    const { logger, lines } = capturingLogger();
    const env = new MockActivityEnvironment({
      activityType: 'dialCall',
      workflowExecution: { workflowId, runId: 'r1' },
    });
    await env.run(async () => logger.info({ to: '+14155550100' }, 'dialling'));
    expect(lines[0]).toMatchObject({ workflowId, activity: 'dialCall', to: '+14155550100', msg: 'dialling' });
    expect(lines[0]!.phoneCallId).toBe(phoneCallId);
  });

  it("names the call an activity's input gives where its workflow id names none (an operator's redelivery)", async () => {
    // Before, a redelivery's attempts logged no call id: a grep on the call missed them.
    const { logger, lines } = capturingLogger();
    const workflowId = 'webhookRedelivery-665f1c2e8b3e4a0012345670-1';
    const env = new MockActivityEnvironment({
      activityType: 'recordAttemptNotMade',
      workflowExecution: { workflowId, runId: 'r1' },
    });
    const log = async () => logger.warn('webhook attempt could not be made');
    const withInput = (args: unknown[]) =>
      new ActivityCallIdFromInput().execute({ args, headers: {} } as never, log as never);
    await env.run(() => withInput([{ callId: CALL_ID, attempt: 2 }]));
    await env.run(() => withInput([{ teamId: 'no call here' }]));
    expect(lines.map((line) => [line.workflowId, line.phoneCallId])).toEqual([
      [workflowId, CALL_ID],
      [workflowId, undefined],
    ]);
  });

  it('adds nothing outside an activity', () => {
    const { logger, lines } = capturingLogger();
    logger.info('starting');
    expect(lines[0]).not.toHaveProperty('workflowId');
  });
});
