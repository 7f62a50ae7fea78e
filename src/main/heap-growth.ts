// How far V8 lets the old generation grow past what the last full collection kept before it
// collects again. Its own heuristics allow up to 4x on a small heap: an API whose live heap is
// ~40 MiB then carries ~70 MiB of dead request objects under load before collecting, which is most
// of its peak RSS. A fixed factor collects sooner, at little CPU (a full collection of a heap this
// size takes milliseconds, and under load one comes every few seconds). It is a pacing knob, not a
// limit: a 10,000-call batch still gets the heap it needs.
import { setFlagsFromString } from 'node:v8';

/**
 * Sets V8's old-generation growth factor to 1 + percent/100 for this process; 0 leaves V8's own.
 * V8 reads the flag each time it sizes the next collection, so setting it at start takes effect
 * (NODE_OPTIONS does not accept it, and a command-line flag would need every way the API starts).
 */
export function applyHeapGrowthPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
