// The chaos run's quick version, part one: the processes a call depends on are killed or stopped under
// live calls (a worker SIGKILLed twice, the Temporal server restarted on its data, FerretDB and
// PostgreSQL down) and started again; nothing is lost, nobody is rung twice, every count is 0.
// Part two is chaos-faults.test.ts (two files, so that the suite's two lanes share them).
import { it } from 'vitest';
import { expectNothingLostThrough } from '../helpers/chaos';

it('loses, rings twice, strands, duplicates, misreports and drops nothing when a worker, Temporal or the database dies', async () => {
  await expectNothingLostThrough(['worker-killed', 'temporal-restarted', 'database-down']);
}, 400_000);
