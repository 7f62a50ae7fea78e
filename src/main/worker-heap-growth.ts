// Imported first by src/main/worker.ts, for its side effect: the worker's old-generation growth factor,
// set before any other module loads (heap-growth.ts says why).
import { heapGrowingPercentOf } from '../config';
import { applyHeapGrowthPercent } from './heap-growth';

applyHeapGrowthPercent(heapGrowingPercentOf('worker') ?? 0);
