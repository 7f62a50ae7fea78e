// Groups work for one key that arrives while that key's previous send is still under way. When
// nothing is in flight an item goes at once (no added latency when quiet); under load, everything
// that arrived meanwhile goes in the next send, so a burst costs a few round trips instead of one
// per item. Each caller's promise settles with the send that carried its item. A send that starts
// after an item was submitted carries it, never one already under way: a read shared this way
// (readTogether) is one that began after its caller asked, so it sees every write made before.

interface Waiting<T, R> {
  item: T;
  settle: (outcome: { error: unknown } | { value: R }) => void;
}

export interface SendTogetherOptions {
  /** Items per send at most; the rest go in the sends after it. */
  maxPerSend?: number;
}

/** In a send's answers: this one item failed, with `error`; the others of the send did not. */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Returns `submit(key, item)`: resolves once a call of `send(key, items)` that included the item has
 * succeeded, with the send's answer for the item (its answers are in the order of `items`; a send
 * that answers nothing resolves each with undefined), and rejects with its error if it failed (the
 * caller retries as it would a send of its own) or answered the item with an ItemFailure. Items of
 * one key are sent in the order they were submitted, one send at a time per key.
 */
export function sendTogether<T, R = void>(
  send: (key: string, items: T[]) => Promise<ReadonlyArray<R | ItemFailure> | void>,
  options: SendTogetherOptions = {},
): (key: string, item: T) => Promise<R> {
  const maxPerSend = options.maxPerSend ?? Number.POSITIVE_INFINITY;
  /** Per key with a send under way: what waits for the next one. */
  const waitingByKey = new Map<string, Array<Waiting<T, R>>>();

  async function drain(key: string): Promise<void> {
    for (;;) {
      const waiting = waitingByKey.get(key)!;
      if (!waiting.length) {
        waitingByKey.delete(key);
        return;
      }
      const group = waiting.splice(0, maxPerSend);
      try {
        const answers = await send(
          key,
          group.map((w) => w.item),
        );
        group.forEach((w, index) => {
          const answer = answers ? answers[index] : undefined;
          if (answer instanceof ItemFailure) w.settle({ error: answer.error });
          else w.settle({ value: answer as R });
        });
      } catch (err) {
        for (const w of group) w.settle({ error: err ?? new Error(`sending for ${key} failed`) });
      }
    }
  }

  return (key, item) =>
    new Promise<R>((resolve, reject) => {
      const entry: Waiting<T, R> = {
        item,
        settle: (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.value)),
      };
      const waiting = waitingByKey.get(key);
      if (waiting) {
        waiting.push(entry);
        return;
      }
      waitingByKey.set(key, [entry]);
      void drain(key);
    });
}

/**
 * Returns `read(key)`: one `load(key)` answers every caller of that key that asked while the load
 * before it was under way. Callers share the answer itself, so they must not change it.
 */
export function readTogether<R>(load: (key: string) => Promise<R>): (key: string) => Promise<R> {
  const submit = sendTogether<null, R>(async (key, items) => {
    const value = await load(key);
    return items.map(() => value);
  });
  return (key) => submit(key, null);
}
