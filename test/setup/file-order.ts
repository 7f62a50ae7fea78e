// The order test files start in, the same on every machine (Vitest's default follows the durations it
// cached on an earlier run, and file sizes on a fresh clone). Files run two at a time. The longest
// files start first, so that the run ends soon after them; the files whose calls race real timers
// (machine greetings at 50x speed, call lengths) start last, once the 10,000-call batch file, the
// heaviest on the servers, is long done.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const FIRST = [
  'test/integration/campaigns.test.ts',
  'test/integration/team-pacer.test.ts',
  'test/integration/batch-and-list.test.ts',
];
const LAST = ['test/integration/telephony-timing.test.ts', 'test/integration/machine-detection.test.ts'];

function rank(spec: TestSpecification): number {
  const first = FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  if (first !== -1) return first - FIRST.length;
  const last = LAST.findIndex((file) => spec.moduleId.endsWith(file));
  return last === -1 ? 0 : last + 1;
}

export default class FileOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: the files in neither list keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
