// Task-queue priority on the real dev server, as npm start runs it (src/local/servers.ts turns its
// priority matcher on): a call made alone, and a team's pacer, are served ahead of a batch's backlog
// on the shared task queue; the API and the dial path start each workflow with its key.
import { randomUUID } from 'node:crypto';
import type { Priority } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWorkflowId, pacerWorkflowId } from '../../src/contracts/ids';
import { PACER_PRIORITY, callPriority } from '../../src/temporal/task-priority';
import { apiClient, callReaching } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('task-queue priority', () => {
  it("hands a worker a call made alone, and a pacer's task, ahead of a batch's backlog", async () => {
    // Workflows on a task queue no worker polls: the test takes their first tasks itself, one at a
    // time, as a worker with one slot would, and notes whose each was.
    const taskQueue = `priority-${randomUUID()}`;
    const started: string[] = [];
    const start = async (name: string, priority: Priority) => {
      const workflowId = `${taskQueue}-${name}`;
      await stack.temporal.workflow.start('phoneCallWorkflow', { workflowId, taskQueue, args: [], priority });
      started.push(workflowId);
    };
    const backlog = 60;
    for (let i = 0; i < backlog; i++) await start(`batch-${i}`, callPriority('batch'));
    await start('alone', callPriority('api'));
    await start('pacer', PACER_PRIORITY);
    try {
      const served: string[] = [];
      while (served.length < started.length) {
        // A long poll wants a deadline; the tasks are there, so it answers at once.
        const task = await stack.temporal.connection.withDeadline(Date.now() + 30_000, () =>
          stack.temporal.workflowService.pollWorkflowTaskQueue({
            namespace: stack.config.TEMPORAL_NAMESPACE,
            taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
            identity: 'task-priority test',
          }),
        );
        if (task.workflowExecution?.workflowId) served.push(task.workflowExecution.workflowId);
      }
      // First in, first out they came at 54 to 62 of 62 (the matcher off, two runs); by priority at 1
      // to 11 (four runs): the dev server's task queue has four partitions, each serving its own tasks
      // by key, and a poll reaches one of them, so a task's turn comes with its partition's.
      const position = (name: string) => served.indexOf(`${taskQueue}-${name}`) + 1;
      expect(position('pacer'), served.join(' ')).toBeLessThanOrEqual(25);
      expect(position('alone'), served.join(' ')).toBeLessThanOrEqual(25);
    } finally {
      await Promise.all(started.map((id) => stack.temporal.workflow.getHandle(id).terminate('test over')));
    }
  });

  it("starts a call made alone, a batch's calls and a team's pacer each with its key", async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const alone = await api.post(
      '/v1/phoneCalls',
      seededCallBody(stack.team, '+14155550123', { callDelayedUntil: tomorrow }),
    );
    expect(alone.status).toBe(201);
    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [seededCallBody(stack.team, '+14155550124', { callDelayedUntil: tomorrow })],
    });
    expect(batch.status).toBe(201);
    // Due now, so that it asks the team's pacer for a dial slot: busy, it ends at once.
    const dialled = await api.post('/v1/phoneCalls', seededCallBody(stack.team, '+14155551486'));
    expect(dialled.status).toBe(201);
    await callReaching(api, dialled.body.data._id, 'busy');

    const priorityOf = async (workflowId: string) =>
      (await stack.temporal.workflow.getHandle(workflowId).describe()).priority?.priorityKey;
    expect(await priorityOf(callWorkflowId(alone.body.data._id))).toBe(callPriority('api').priorityKey);
    expect(await priorityOf(callWorkflowId(batch.body.data[0]._id))).toBe(callPriority('batch').priorityKey);
    expect(await priorityOf(pacerWorkflowId(stack.team.teamId))).toBe(PACER_PRIORITY.priorityKey);
  });
});
