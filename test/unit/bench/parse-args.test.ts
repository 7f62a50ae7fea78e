// The bench's command line: how the service runs (compiled by the run, a build given, or tsx).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../../bench/run';

describe('npm run bench -- ...', () => {
  it('compiles the service itself unless given a build (--dist) or told to run the sources (--tsx)', () => {
    const how = (argv: string[]) => {
      const { tsx, dist } = parseArgs(argv, {});
      return { tsx, dist };
    };
    expect(how([])).toEqual({ tsx: false, dist: undefined });
    expect(how(['--dist', 'build/dist'])).toEqual({ tsx: false, dist: path.resolve('build/dist') });
    expect(how(['--tsx'])).toEqual({ tsx: true, dist: undefined });
  });

  it('refuses --tsx with --dist, and --dist without a folder', () => {
    expect(() => parseArgs(['--tsx', '--dist', 'dist'], {})).toThrow(
      /^--tsx and --dist each choose how the service runs/,
    );
    expect(() => parseArgs(['--dist'], {})).toThrow(/^--dist needs a value/);
  });
});
