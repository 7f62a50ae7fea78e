// A bench figure against its baseline, and how the results table shows it: a baseline measured only
// up to a cap is a lower bound, which judges an "at most" budget soundly and says so in the table.
import { describe, expect, it } from 'vitest';
import { markdownSection } from '../../../bench/run';
import { BUDGETS, figure, type BenchFigure } from '../../../bench/scenario';

function tableRows(figures: BenchFigure[]): string[] {
  const markdown = markdownSection(
    {
      startedAt: '2026-11-29T22:00:00.000Z',
      finishedAt: '2026-11-29T22:10:00.000Z',
      seconds: 600,
      quick: false,
      machine: { cores: 2, memoryGiB: 8, node: 'v20.19.0' },
      servers: { mongodb: { server: 'FerretDB' }, temporal: { server: 'dev server' } },
      processes: 'compiled',
      scenarios: [
        {
          name: 'lists',
          description: '',
          params: {},
          seconds: 300,
          figures,
          rss: { peakMiB: {}, endMiB: {} },
        },
      ],
    },
    'bench/results/x.json',
  );
  return markdown.split('\n').filter((line) => line.startsWith('| lists | list'));
}

describe('figure', () => {
  it('judges a value against a measured baseline and shows both as measured', () => {
    const f = figure('list toPhoneNumber, p99 vs raw', 11, 'ms', { baseline: 5.8, budget: BUDGETS.listVsRaw });
    expect(f).toMatchObject({ baseline: 5.8, ratio: 1.897, met: false });
    expect(f.baselineAtLeast).toBeUndefined();
    expect(tableRows([f])).toEqual([
      '| lists | list toPhoneNumber, p99 vs raw | 11 ms | 5.8 ms | 1.897x | <= 1.2x baseline | **no** |',
    ]);
  });

  it('marks a capped baseline as a lower bound and its ratio as an upper bound', () => {
    const f = figure('list unfiltered, p99 vs raw', 66, 'ms', {
      baseline: 2000,
      baselineAtLeast: true,
      budget: BUDGETS.listVsRaw,
    });
    expect(f).toMatchObject({ baseline: 2000, baselineAtLeast: true, ratio: 0.033, met: true });
    expect(tableRows([f])).toEqual([
      '| lists | list unfiltered, p99 vs raw | 66 ms | ≥ 2000 ms | ≤ 0.033x | <= 1.2x baseline | yes |',
    ]);
  });

  it('refuses a lower-bound baseline for a budget it cannot judge', () => {
    expect(() =>
      figure('end to end', 10, 'calls/s', { baseline: 20, baselineAtLeast: true, budget: BUDGETS.endToEndRate }),
    ).toThrow(/lower bound/);
  });
});
