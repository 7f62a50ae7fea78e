// docker-compose.yml cannot run on this machine (no Docker engine): what it repeats of the code is
// checked against the code here, so that the deployment does not drift from what `npm start` runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/contracts/search-attributes';
import { PRIORITY_MATCHER_KEY, TIMER_MAX_TIME_SHIFT, TIMER_MAX_TIME_SHIFT_KEY } from '../../src/local/servers';

const compose = readFileSync(path.resolve(__dirname, '..', '..', 'docker-compose.yml'), 'utf8');

describe('docker-compose.yml', () => {
  it('registers every search attribute the call workflow keeps, with its type, and waits until a query names them all', () => {
    const registered = /^\s*attributes='([^']*)'$/m.exec(compose)?.[1]?.split(' ');
    expect(registered).toEqual(SEARCH_ATTRIBUTE_DEFINITIONS.map(({ name, type }) => `${name}=${type}`));
    const probe = /^\s*probe="([^"]*)"$/m.exec(compose)?.[1] ?? '';
    for (const { name } of SEARCH_ATTRIBUTE_DEFINITIONS) expect(probe).toContain(`${name} `);
  });

  it("gives the Temporal server the timer precision the team pacer needs, as npm start's servers have it", () => {
    expect(compose).toMatch(
      new RegExp(`^ +${TIMER_MAX_TIME_SHIFT_KEY.replaceAll('.', '\\.')}:\\n +- value: ${TIMER_MAX_TIME_SHIFT}$`, 'm'),
    );
    expect(compose).toMatch(/^ +DYNAMIC_CONFIG_FILE_PATH: (\S+)\n[\s\S]*^ +target: \1$/m);
  });

  it("serves the Temporal server's task queues by priority key, as npm start's servers do", () => {
    expect(compose).toMatch(new RegExp(`^ +${PRIORITY_MATCHER_KEY.replaceAll('.', '\\.')}:\\n +- value: true$`, 'm'));
  });

  it('publishes the Temporal frontend and its Web UI, which ask for no login, on loopback only', () => {
    expect(compose).toContain("- '127.0.0.1:7233:7233'");
    expect(compose).toContain("- '127.0.0.1:8080:8080'");
    expect(compose).not.toMatch(/- '(7233|8080):/);
  });
});
