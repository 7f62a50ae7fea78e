// The order of the writes to one webhook delivery record: the delivery workflow's order, so that a
// write landing late never takes the record back to what an earlier one saw.
import { describe, expect, it } from 'vitest';
import { deliveryWriteOrder } from '../../../src/data/webhook-store';

describe('deliveryWriteOrder', () => {
  it("puts a redelivery's writes after every write of the stream and of earlier redeliveries", () => {
    expect(deliveryWriteOrder(1, 1, true, 1)).toBeGreaterThan(deliveryWriteOrder(0, 50, false, 10));
    expect(deliveryWriteOrder(2, 1, true, 1)).toBeGreaterThan(deliveryWriteOrder(1, 50, false, 10));
  });

  it('puts a later attempt after every write of an earlier one', () => {
    expect(deliveryWriteOrder(0, 2, true, 1)).toBeGreaterThan(deliveryWriteOrder(0, 1, true, 10));
    expect(deliveryWriteOrder(0, 2, true, 1)).toBeGreaterThan(deliveryWriteOrder(0, 1, false, 10));
  });

  it('puts a later try of one activity after an earlier try', () => {
    expect(deliveryWriteOrder(0, 3, true, 2)).toBeGreaterThan(deliveryWriteOrder(0, 3, true, 1));
    expect(deliveryWriteOrder(0, 3, false, 2)).toBeGreaterThan(deliveryWriteOrder(0, 3, false, 1));
  });

  it('puts the note that an attempt could not be made after every try that made it', () => {
    expect(deliveryWriteOrder(0, 3, false, 1)).toBeGreaterThan(deliveryWriteOrder(0, 3, true, 10));
    // Even past the ten tries the workflow allows.
    expect(deliveryWriteOrder(0, 3, false, 1)).toBeGreaterThan(deliveryWriteOrder(0, 3, true, 5_000));
  });
});
