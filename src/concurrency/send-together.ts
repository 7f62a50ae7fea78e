// Groups work for one key that arrives while that key's previous send is still under way. When
// nothing is in flight an item goes at once (no added latency when quiet); under load, everything
// that arrived meanwhile goes in the next send, so a burst costs a few round trips instead of one
// per item. Each caller's promise settles with the send that carried its item.

interface Waiting<T> {
  item: T;
  settle: (err?: unknown) => void;
}

export interface SendTogetherOptions {
  /** Items per send at most; the rest go in the sends after it. */
  maxPerSend?: number;
}

/**
 * Returns `submit(key, item)`: resolves once a call of `send(key, items)` that included the item has
 * succeeded, and rejects with its error if it failed (the caller retries as it would a send of its
 * own). Items of one key are sent in the order they were submitted, one send at a time per key.
 */
export function sendTogether<T>(
  send: (key: string, items: T[]) => Promise<void>,
  options: SendTogetherOptions = {},
): (key: string, item: T) => Promise<void> {
  const maxPerSend = options.maxPerSend ?? Number.POSITIVE_INFINITY;
  /** Per key with a send under way: what waits for the next one. */
  const waitingByKey = new Map<string, Array<Waiting<T>>>();

  async function drain(key: string): Promise<void> {
    for (;;) {
      const waiting = waitingByKey.get(key)!;
      if (!waiting.length) {
        waitingByKey.delete(key);
        return;
      }
      const group = waiting.splice(0, maxPerSend);
      try {
        await send(
          key,
          group.map((w) => w.item),
        );
        for (const w of group) w.settle();
      } catch (err) {
        for (const w of group) w.settle(err ?? new Error(`sending for ${key} failed`));
      }
    }
  }

  return (key, item) =>
    new Promise<void>((resolve, reject) => {
      const entry = { item, settle: (err?: unknown) => (err === undefined ? resolve() : reject(err)) };
      const waiting = waitingByKey.get(key);
      if (waiting) {
        waiting.push(entry);
        return;
      }
      waitingByKey.set(key, [entry]);
      void drain(key);
    });
}
