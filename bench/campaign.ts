// The campaign scenario of `npm run bench`: N calls in one batch of one team with a live-call cap and
// a dial rate, through the emulator, until every call has ended; once with the team pacer and once
// without (PACING_ENABLED=false). Reports whether the cap and the rate held, and what pacing cost:
// CPU and memory of the service process, and Temporal history events per call.
import type { Client } from '@temporalio/client';
import { setTeamLimits } from '../src/admin/commands';
import { callWorkflowId, pacerWorkflowId } from '../src/contracts/ids';
import { apiClient } from '../test/helpers/http';
import type { TestStack } from '../test/helpers/service-stack';

export interface CampaignOptions {
  calls: number;
  maxConcurrentCalls: number;
  dialsPerSecond: number;
}

export interface CampaignFigures {
  paced: boolean;
  calls: number;
  seconds: number;
  maxLive: number;
  maxDialsInOneSecond: number;
  cpuMsPerCall: number;
  rssMiB: number;
  historyEventsPerCall: number;
  pacerHistoryEventsPerCall: number;
}

type Call = { _id: string; status: string; callTriggeredAt?: string; callEndedAt?: string };
const TERMINAL = new Set(['completed', 'busy', 'noAnswer', 'failed', 'cancelled']);

function maxOverlap(calls: Call[]): number {
  const edges = calls
    .filter((c) => c.callTriggeredAt && c.callEndedAt)
    .flatMap((c) => [
      { at: Date.parse(c.callTriggeredAt!), step: 1 },
      { at: Date.parse(c.callEndedAt!), step: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.step - b.step);
  let live = 0;
  let max = 0;
  for (const edge of edges) max = Math.max(max, (live += edge.step));
  return max;
}

/** The most dials that began within any one-second window. */
function maxPerSecond(calls: Call[]): number {
  const times = calls
    .filter((c) => c.callTriggeredAt)
    .map((c) => Date.parse(c.callTriggeredAt!))
    .sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i += 1) {
    while (times[i]! - times[j]! >= 1000) j += 1;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

async function historyLength(client: Client, query: string): Promise<number> {
  let total = 0;
  for await (const execution of client.workflow.list({ query })) total += execution.historyLength;
  return total;
}

export async function runCampaign(
  stack: TestStack,
  options: CampaignOptions,
  paced: boolean,
): Promise<CampaignFigures> {
  const team = await stack.seedTeam(`Campaign ${paced ? 'paced' : 'unpaced'}`);
  await setTeamLimits({
    team: team.teamId,
    maxConcurrentCalls: String(options.maxConcurrentCalls),
    dialsPerSecond: `twilio=${options.dialsPerSecond}`,
  });
  const api = apiClient(stack.baseUrl, team.key);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const ids: string[] = [];
  for (let offset = 0; offset < options.calls; offset += 10_000) {
    const size = Math.min(10_000, options.calls - offset);
    const res = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: Array.from({ length: size }, (_, i) => ({
        teamId: team.teamId,
        callTemplateId: team.templateId,
        // Busy lines: every call is live from dial to busy signal, and short.
        toPhoneNumber: `+1415${String(2_000_000 + offset + i)
          .padStart(7, '0')
          .slice(-7, -4)}1486`,
        promptVariableValues: [{ key: 'firstName', value: `P${offset + i}` }],
        telephonyProvider: 'twilio',
      })),
    });
    if (res.status !== 201) throw new Error(`batch answered ${res.status}: ${JSON.stringify(res.body)}`);
    ids.push(...(res.body.data as Call[]).map((c) => c._id));
  }
  const deadline = Date.now() + 3 * 3_600_000;
  let calls: Call[];
  for (;;) {
    calls = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: Call[]; nextCursor: string | null } } = await api.get(
        `/v1/phoneCalls?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      );
      calls.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    if (calls.length >= ids.length && calls.every((c) => TERMINAL.has(c.status))) break;
    if (Date.now() > deadline) throw new Error('the campaign did not end within 3 hours');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 50)) === 0);
  let sampleEvents = 0;
  for (const id of sample) {
    sampleEvents += (await stack.temporal.workflow.getHandle(callWorkflowId(id)).describe()).historyLength;
  }
  const pacerEvents = paced ? await historyLength(stack.temporal, `WorkflowId = '${pacerWorkflowId(team.teamId)}'`) : 0;
  return {
    paced,
    calls: ids.length,
    seconds,
    maxLive: maxOverlap(calls),
    maxDialsInOneSecond: maxPerSecond(calls),
    cpuMsPerCall: (cpu.user + cpu.system) / 1000 / ids.length,
    rssMiB: process.memoryUsage().rss / 2 ** 20,
    historyEventsPerCall: sampleEvents / sample.length,
    pacerHistoryEventsPerCall: pacerEvents / ids.length,
  };
}

export function campaignTable(options: CampaignOptions, runs: CampaignFigures[]): string[] {
  const lines = [
    `\nCampaign: ${options.calls} calls in one team, cap ${options.maxConcurrentCalls} live, ${options.dialsPerSecond} dials/s (busy lines, emulator at 50x):\n`,
    '| run | time | max live | max dials in 1 s | CPU per call | RSS after | history events per call | pacer events per call |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of runs) {
    const held = r.paced
      ? ` (${r.maxLive <= options.maxConcurrentCalls && r.maxDialsInOneSecond <= options.dialsPerSecond + 1 ? 'held' : 'NOT held'})`
      : '';
    lines.push(
      `| ${r.paced ? 'paced' : 'without pacing'}${held} | ${r.seconds.toFixed(0)} s | ${r.maxLive} | ${r.maxDialsInOneSecond} | ${r.cpuMsPerCall.toFixed(1)} ms | ${r.rssMiB.toFixed(0)} MiB | ${r.historyEventsPerCall.toFixed(1)} | ${r.pacerHistoryEventsPerCall.toFixed(1)} |`,
    );
  }
  return lines;
}
