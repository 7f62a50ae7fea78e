import { describe, expect, it } from 'vitest';
import { meetingTimeZone } from '../../../src/results/meeting-time-zone';

const SAN_FRANCISCO = '+14155550007';
const TOLL_FREE = '+18005550100';
/** International networks: libphonenumber knows no zone for it. */
const NO_ZONE_DATA = '+882345678901';

describe('meetingTimeZone', () => {
  it("takes the create's calleeTimeZone over the number's zone and the template's", async () => {
    expect(
      await meetingTimeZone({
        calleeTimeZone: 'America/Chicago',
        toPhoneNumber: SAN_FRANCISCO,
        templateTimeZone: 'America/New_York',
      }),
    ).toBe('America/Chicago');
  });

  it("takes the number's zone over the template's when the number has exactly one", async () => {
    expect(await meetingTimeZone({ toPhoneNumber: SAN_FRANCISCO, templateTimeZone: 'America/New_York' })).toBe(
      'America/Los_Angeles',
    );
    expect(await meetingTimeZone({ calleeTimeZone: null, toPhoneNumber: '+12125550123', templateTimeZone: null })).toBe(
      'America/New_York',
    );
  });

  it.each([
    ['spans several zones (toll-free)', TOLL_FREE],
    ['has no zone data', NO_ZONE_DATA],
  ])("takes the template's zone when the number %s", async (_, number) => {
    expect(await meetingTimeZone({ toPhoneNumber: number, templateTimeZone: 'Europe/Paris' })).toBe('Europe/Paris');
  });

  it('reads UTC when nothing names a zone', async () => {
    expect(await meetingTimeZone({ toPhoneNumber: TOLL_FREE })).toBe('UTC');
    expect(await meetingTimeZone({ calleeTimeZone: '', toPhoneNumber: NO_ZONE_DATA, templateTimeZone: '' })).toBe(
      'UTC',
    );
  });
});
