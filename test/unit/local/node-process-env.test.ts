import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_PROCESS_ENV, withNodeProcessEnv } from '../../../src/local/node-process-env';

describe('the environment of the service processes', () => {
  it('is the image’s too: the Dockerfile sets each variable alike', async () => {
    const dockerfile = await readFile(path.join(__dirname, '../../../Dockerfile'), 'utf8');
    for (const [name, value] of Object.entries(NODE_PROCESS_ENV))
      expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'));
  });

  it('is added under what the environment sets itself', () => {
    expect(withNodeProcessEnv({ PORT: '1' })).toEqual({ ...NODE_PROCESS_ENV, PORT: '1' });
    expect(withNodeProcessEnv({ MALLOC_ARENA_MAX: '8' })).toMatchObject({ MALLOC_ARENA_MAX: '8' });
  });
});
