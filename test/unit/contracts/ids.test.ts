// Workflow ids read back: a webhook delivery write needs the number of the redelivery it belongs to.
import { describe, expect, it } from 'vitest';
import { deliveryWorkflowId, redeliveryNumberOf, redeliveryWorkflowId } from '../../../src/contracts/ids';

const id = '0123456789abcdef01234567';

describe('redeliveryNumberOf', () => {
  it("reads a redelivery's number from its workflow id", () => {
    expect(redeliveryNumberOf(redeliveryWorkflowId(id, 1))).toBe(1);
    expect(redeliveryNumberOf(redeliveryWorkflowId(id, 12))).toBe(12);
  });

  it("answers 0 for a call's own delivery stream and any other id", () => {
    expect(redeliveryNumberOf(deliveryWorkflowId(id, 'team:abc'))).toBe(0);
    expect(redeliveryNumberOf(`webhookRedelivery-${id}-0`)).toBe(0);
    expect(redeliveryNumberOf(`webhookRedelivery-${id}-1x`)).toBe(0);
    expect(redeliveryNumberOf('')).toBe(0);
  });
});
