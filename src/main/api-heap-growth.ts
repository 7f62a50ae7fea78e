// Imported first by src/main/api.ts, for its side effect: the api's old-generation growth factor,
// set before any other module loads (heap-growth.ts says why).
import { heapGrowingPercentOf } from '../config';
import { applyHeapGrowthPercent } from './heap-growth';

applyHeapGrowthPercent(heapGrowingPercentOf('api') ?? 0);
