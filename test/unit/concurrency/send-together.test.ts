import { describe, expect, it } from 'vitest';
import { ItemFailure, readTogether, sendTogether } from '../../../src/concurrency/send-together';

/** A send that records what it carried and finishes only when told to. */
function heldSend() {
  const sends: Array<{ key: string; items: number[]; finish: (err?: Error) => void }> = [];
  const send = (key: string, items: number[]) =>
    new Promise<void>((resolve, reject) => {
      sends.push({ key, items, finish: (err) => (err ? reject(err) : resolve()) });
    });
  return { sends, send };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('sendTogether', () => {
  it('sends at once when nothing is in flight, and groups what arrives meanwhile, in order', async () => {
    const { sends, send } = heldSend();
    const submit = sendTogether(send);
    const first = submit('team-a', 1);
    await tick();
    expect(sends.map((s) => s.items)).toEqual([[1]]);
    const later = [2, 3, 4].map((n) => submit('team-a', n));
    await tick();
    expect(sends).toHaveLength(1); // the others wait for the send under way
    sends[0]!.finish();
    await first;
    await tick();
    expect(sends.map((s) => s.items)).toEqual([[1], [2, 3, 4]]);
    sends[1]!.finish();
    await Promise.all(later);
  });

  it('keeps keys apart: another key does not wait for this one', async () => {
    const { sends, send } = heldSend();
    const submit = sendTogether(send);
    void submit('team-a', 1);
    const b = submit('team-b', 2);
    await tick();
    expect(sends.map((s) => [s.key, s.items])).toEqual([
      ['team-a', [1]],
      ['team-b', [2]],
    ]);
    sends[1]!.finish();
    await b;
    sends[0]!.finish();
  });

  it('fails every item of a failed send, and carries on with the next group', async () => {
    const { sends, send } = heldSend();
    const submit = sendTogether(send);
    const first = submit('team-a', 1);
    await tick();
    const grouped = [submit('team-a', 2), submit('team-a', 3)];
    sends[0]!.finish();
    await first;
    await tick();
    sends[1]!.finish(new Error('server unavailable'));
    for (const p of grouped) await expect(p).rejects.toThrow('server unavailable');
    const again = submit('team-a', 4);
    await tick();
    expect(sends.at(-1)!.items).toEqual([4]);
    sends.at(-1)!.finish();
    await again;
  });

  it('splits a group larger than maxPerSend over several sends', async () => {
    const { sends, send } = heldSend();
    const submit = sendTogether(send, { maxPerSend: 2 });
    const all = [1, 2, 3, 4, 5].map((n) => submit('team-a', n));
    for (let i = 0; i < 4; i++) {
      await tick();
      sends.at(-1)?.finish();
    }
    await Promise.all(all);
    expect(sends.map((s) => s.items)).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("settles each item with the send's answer for it, an ItemFailure rejecting that item alone", async () => {
    const sends: number[][] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const submit = sendTogether<number, string>(async (_key, items) => {
      sends.push(items);
      await held;
      return items.map((n) => (n === 3 ? new ItemFailure(new Error('duplicate 3')) : `stored ${n}`));
    });
    const first = submit('team-a', 1);
    const grouped = [2, 3, 4].map((n) => submit('team-a', n));
    release();
    await expect(first).resolves.toBe('stored 1');
    await expect(grouped[0]).resolves.toBe('stored 2');
    await expect(grouped[1]).rejects.toThrow('duplicate 3');
    await expect(grouped[2]).resolves.toBe('stored 4');
    expect(sends).toEqual([[1], [2, 3, 4]]);
  });
});

describe('readTogether', () => {
  it('answers the callers that asked during a read with one read begun after they asked', async () => {
    const reads: Array<{ key: string; finish: (value: string) => void }> = [];
    const read = readTogether(
      (key) => new Promise<string>((resolve) => reads.push({ key, finish: (value) => resolve(value) })),
    );
    const first = read('key-1');
    await tick();
    // These ask while the first read is under way: the value it answers may predate them.
    const during = [read('key-1'), read('key-1')];
    const other = read('key-2');
    await tick();
    expect(reads.map((r) => r.key)).toEqual(['key-1', 'key-2']);
    reads[0]!.finish('revoked: no');
    await expect(first).resolves.toBe('revoked: no');
    await tick();
    expect(reads.map((r) => r.key)).toEqual(['key-1', 'key-2', 'key-1']);
    reads[2]!.finish('revoked: yes');
    expect(await Promise.all(during)).toEqual(['revoked: yes', 'revoked: yes']);
    reads[1]!.finish('other');
    await expect(other).resolves.toBe('other');
  });
});
