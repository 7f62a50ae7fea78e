// How far V8 lets the old generation grow past what the last full collection kept before it collects
// again. Its own heuristics allow up to 4x on a small heap: the API, whose live heap is ~40 MiB, then
// carried ~70 MiB of dead request objects under load before collecting, most of its peak RSS, and the
// worker's RSS with its cache full stayed 100 MiB or more above what it holds. A fixed factor collects sooner, at
// little CPU (a full collection of the API's heap takes milliseconds; under load one comes every few
// seconds). It paces collections and limits nothing: a 10,000-call batch still gets the heap it needs.
//
// It must act before the other modules load: V8 computes the next limit only at a full collection,
// and loading them runs the first ones, so a factor set after that waits out a limit already set high.
// NODE_OPTIONS does not accept the flag, and a command-line flag would need every way they start. So
// each entry's first import (api-heap-growth.ts, worker-heap-growth.ts) sets it, for its process.
import { setFlagsFromString } from 'node:v8';

/** Sets V8's old-generation growth factor to 1 + percent/100 for this process; 0 leaves V8's own. */
export function applyHeapGrowthPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
