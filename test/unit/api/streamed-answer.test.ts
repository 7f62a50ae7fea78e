import { describe, expect, it } from 'vitest';
import { streamedDataAnswer } from '../../../src/api/streamed-answer';

async function textOf(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const piece of stream) text += String(piece);
  return text;
}

describe('streamedDataAnswer', () => {
  const view = (n: number) => ({ n, label: `call "${n}"`, gone: undefined });

  // Around the piece size (200): none, one, a whole piece, one past it, several.
  it.each([0, 1, 200, 201, 450])('writes %i items as JSON.stringify would write the whole answer', async (count) => {
    const items = Array.from({ length: count }, (_, i) => i);
    const rest = { batchId: 'b1', note: 'a "quoted" value' };
    const text = await textOf(streamedDataAnswer(items, view, rest));
    expect(text).toBe(JSON.stringify({ data: items.map(view), ...rest }));
  });

  it('writes no trailing fields when there are none', async () => {
    expect(await textOf(streamedDataAnswer([1, 2], view))).toBe(JSON.stringify({ data: [1, 2].map(view) }));
  });

  it('makes the views as it is read, not all at once', async () => {
    let made = 0;
    const stream = streamedDataAnswer(
      Array.from({ length: 10_000 }, (_, i) => i),
      (n) => {
        made += 1;
        return { n };
      },
    );
    const reader = stream[Symbol.asyncIterator]();
    await reader.next();
    await reader.next();
    // The opening, one piece read, at most one more buffered ahead.
    expect(made).toBeLessThanOrEqual(600);
    await reader.return?.();
  });
});
