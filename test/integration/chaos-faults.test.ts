// The chaos run's quick version, part two: the API SIGKILLed under a batch and the batch retried with
// its Idempotency-Key, a provider refusing, losing answers and sending callbacks late and twice, and a
// webhook receiver down past several retries; nothing is lost, nobody is rung twice, every count is 0.
import { it } from 'vitest';
import { expectNothingLostThrough } from '../helpers/chaos';

it('loses, rings twice, strands, duplicates, misreports and drops nothing when the API, the provider or a receiver fails', async () => {
  await expectNothingLostThrough(['api-killed-mid-batch', 'provider-faults', 'webhook-receiver-down']);
}, 400_000);
