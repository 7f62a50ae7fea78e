// Which event is a call's last (a delivery stream ends after it): its final status or its deletion.
import { describe, expect, it } from 'vitest';
import { CALL_STATUSES, isTerminal } from '../../../src/contracts/call-status';
import { CALL_EVENT_NAMES, isFinalCallEvent, statusEventName } from '../../../src/contracts/events';

describe('isFinalCallEvent', () => {
  it('is true for the final statuses and the deletion, false for every other event', () => {
    const final = CALL_EVENT_NAMES.filter(isFinalCallEvent);
    expect(final.sort()).toEqual(
      [
        'phoneCall.busy',
        'phoneCall.cancelled',
        'phoneCall.completed',
        'phoneCall.deleted',
        'phoneCall.failed',
        'phoneCall.noAnswer',
      ].sort(),
    );
  });

  it('agrees with the status machine for every status', () => {
    for (const status of CALL_STATUSES) expect(isFinalCallEvent(statusEventName(status))).toBe(isTerminal(status));
  });
});
