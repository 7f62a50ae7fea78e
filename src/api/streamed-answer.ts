// An answer of many items written a piece at a time: `{"data":[...],...rest}` as JSON.stringify would
// give it whole. A batch of 10,000 calls answered at once held every call's view and a ~9 MiB string
// beside the stored calls, the API's last rise in memory under a batch; here a few hundred views at a
// time exist, as the client reads them.
import { Readable } from 'node:stream';

/** Items turned into JSON per piece written. */
const ITEMS_PER_PIECE = 200;

/**
 * The answer `{ data: items.map(view), ...rest }` as a stream of its JSON text. The views are made as
 * the stream is read, so the items must not change until it ends (the route's own rows do not).
 */
export function streamedDataAnswer<T>(
  items: readonly T[],
  view: (item: T) => unknown,
  rest: Record<string, unknown> = {},
): Readable {
  const tail = JSON.stringify(rest).slice(1);
  function* pieces(): Generator<string> {
    yield '{"data":[';
    for (let start = 0; start < items.length; start += ITEMS_PER_PIECE) {
      const views = items.slice(start, start + ITEMS_PER_PIECE).map((item) => JSON.stringify(view(item)));
      yield (start > 0 ? ',' : '') + views.join(',');
    }
    // `rest` without its opening brace: `}` alone, or `,"key":...}`.
    yield ']' + (tail === '}' ? '}' : `,${tail}`);
  }
  // One piece buffered ahead: the point is not to hold the answer.
  return Readable.from(pieces(), { objectMode: false, highWaterMark: 1 });
}
