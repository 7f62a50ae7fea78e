import { describe, expect, it } from 'vitest';
import type { HostLookup } from '../../../src/webhooks/ssrf-guard';
import { webhookUrlsProblems } from '../../../src/webhooks/url-policy';

/** A resolver that answers from a table after a turn of the event loop, counting queries and how many overlap. */
function countingLookup(table: Record<string, string>) {
  const asked: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const lookup: HostLookup = async (hostname) => {
    asked.push(hostname);
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    inFlight--;
    const address = table[hostname];
    if (!address) throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };
  return { lookup, asked, mostInFlight: () => mostInFlight };
}

describe('webhookUrlsProblems', () => {
  it('looks each host up once, however many paths and queries name it', async () => {
    const { lookup, asked } = countingLookup({ 'hooks.example.com': '93.184.216.34' });
    const urls = Array.from({ length: 2_000 }, (_, i) => `https://hooks.example.com/cb?ref=${i}`);
    const problems = await webhookUrlsProblems([...urls, 'http://hooks.example.com/other'], false, lookup);
    expect(asked).toEqual(['hooks.example.com']);
    expect(problems.size).toBe(2_001);
    expect([...problems.values()].every((problem) => problem === null)).toBe(true);
  });

  it("gives every URL its host's verdict, and looks distinct hosts up side by side", async () => {
    const table: Record<string, string> = { 'inside.example.com': '10.1.2.3' };
    for (let i = 0; i < 40; i++) table[`h${i}.example.com`] = '93.184.216.34';
    const { lookup, asked, mostInFlight } = countingLookup(table);
    const urls = [
      ...Object.keys(table).map((host) => `https://${host}/a`),
      'https://inside.example.com/b?x=1',
      'https://not-yet.example.com/c',
    ];
    const problems = await webhookUrlsProblems(urls, false, lookup);
    expect(asked).toHaveLength(42);
    expect(mostInFlight()).toBeGreaterThan(1);
    expect(mostInFlight()).toBeLessThanOrEqual(16);
    expect(problems.get('https://inside.example.com/a')).toMatch(/^host inside\.example\.com resolves to /);
    expect(problems.get('https://inside.example.com/b?x=1')).toBe(problems.get('https://inside.example.com/a'));
    expect(problems.get('https://h0.example.com/a')).toBeNull();
    // A name that does not resolve yet may be registered.
    expect(problems.get('https://not-yet.example.com/c')).toBeNull();
  });
});
