// campaign (not run by default): bench/campaign.ts as it was, N busy-line calls in one team with a cap
// and a dial rate, once with the team pacer and once without, each on a stack of its own (API, worker
// and emulator in the harness's process, PACING_ENABLED on and off) over the same servers.
// BENCH_CAMPAIGN_CALLS, BENCH_CAMPAIGN_CAP and BENCH_CAMPAIGN_RATE set the full run's values as before.
import mongoose from 'mongoose';
import { connectMongo } from '../../src/data/connection';
import { startServiceStack } from '../../test/helpers/service-stack';
import { runCampaign, type CampaignFigures } from '../campaign';
import { figure, ms, type BenchFigure, type BenchScenario } from '../scenario';

export const campaignScenario: BenchScenario = {
  name: 'campaign',
  description: 'a paced campaign against the same campaign unpaced (cap and rate held, CPU and events per call)',
  defaultOn: false,
  params: {
    calls: { full: Number(process.env.BENCH_CAMPAIGN_CALLS ?? 10_000), quick: 60, description: 'calls' },
    cap: { full: Number(process.env.BENCH_CAMPAIGN_CAP ?? 50), quick: 5, description: 'live-call cap' },
    rate: { full: Number(process.env.BENCH_CAMPAIGN_RATE ?? 10), quick: 10, description: 'dials per second' },
  },
  async run(ctx) {
    const options = {
      calls: ctx.params.calls!,
      maxConcurrentCalls: ctx.params.cap!,
      dialsPerSecond: ctx.params.rate!,
    };
    // Each campaign stack connects this process's mongoose to a database of its own.
    await mongoose.disconnect();
    const runs: CampaignFigures[] = [];
    try {
      for (const paced of [true, false]) {
        ctx.log(`campaign: ${options.calls} calls ${paced ? 'paced' : 'without pacing'}`);
        const stack = await startServiceStack(
          { mongoUri: ctx.mongoUri, temporalAddress: ctx.temporalAddress, workflowBundlePath: ctx.workflowBundlePath },
          { speedFactor: 0.02, env: { PACING_ENABLED: String(paced) } },
        );
        try {
          runs.push(await runCampaign(stack, options, paced));
        } finally {
          await stack.stop();
          await mongoose.disconnect();
        }
      }
    } finally {
      await connectMongo(ctx.mongoUri, 5);
    }
    const figures: BenchFigure[] = [];
    for (const r of runs) {
      const run = r.paced ? 'paced' : 'without pacing';
      const held = r.maxLive <= options.maxConcurrentCalls && r.maxDialsInOneSecond <= options.dialsPerSecond + 1;
      figures.push(
        figure(
          `campaign ${run}: ${r.calls} calls, cap ${options.maxConcurrentCalls}, ${options.dialsPerSecond}/s`,
          ms(r.seconds),
          's',
          {
            note: `max live ${r.maxLive}, max dials in 1 s ${r.maxDialsInOneSecond}${r.paced ? (held ? ' (held)' : ' (NOT held)') : ''}`,
          },
        ),
        figure(`campaign ${run}: CPU per call`, ms(r.cpuMsPerCall), 'ms'),
        figure(`campaign ${run}: history events per call`, ms(r.historyEventsPerCall), 'events', {
          note: `pacer events per call ${ms(r.pacerHistoryEventsPerCall)}`,
        }),
      );
    }
    return figures;
  },
};
