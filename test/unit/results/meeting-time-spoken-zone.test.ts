// A meeting time said with a time zone ("Tuesday at 3pm Eastern") is read in that zone, not the callee's.
import { describe, expect, it } from 'vitest';
import { findFixedMeetingTime } from '../../../src/results/meeting-time';
import type { Utterance } from '../../../src/results/text';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

// Monday 2 March 2026, 09:00 in Chicago (CST, UTC-6). US daylight saving starts on Sunday 8 March,
// the EU's on 29 March: on Tuesday 3 March New York is UTC-5, London UTC+0 and Paris UTC+1.
const MONDAY_CALL = new Date('2026-03-02T15:00:00.000Z');
const CHICAGO = 'America/Chicago';

function meetingIn(utterances: Utterance[], timeZone = CHICAGO): string | null {
  return findFixedMeetingTime(utterances, { callTime: MONDAY_CALL, timeZone });
}

describe('findFixedMeetingTime: a zone named with the time', () => {
  it.each([
    ['Tuesday at 3pm Eastern', '2026-03-03T20:00:00.000Z'],
    // unpunctuated speech: any word but a name or a place after the zone
    ['Tuesday at 3pm Eastern probably works', '2026-03-03T20:00:00.000Z'],
    ['Tuesday 3pm EST does that work', '2026-03-03T20:00:00.000Z'],
    ['3pm Eastern January 5th works', '2027-01-05T20:00:00.000Z'],
    ['tuesday at 3pm eastern', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm Eastern time works', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm, Eastern.', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm (Eastern Standard Time)', '2026-03-03T20:00:00.000Z'],
    // a daylight abbreviation said for a day in standard time: the region's clock that day
    ['Tuesday at 3pm EDT', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm Central', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm CDT', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm Mountain', '2026-03-03T22:00:00.000Z'],
    ['Tuesday at 3pm MDT', '2026-03-03T22:00:00.000Z'],
    ['Tuesday at 3pm Pacific', '2026-03-03T23:00:00.000Z'],
    ['Tuesday at 3pm PDT', '2026-03-03T23:00:00.000Z'],
    // a standard abbreviation said for a day in summer time: the region's clock that day
    ['July 7 at 3pm CST', '2026-07-07T20:00:00.000Z'],
    ['July 7 at 3pm MST', '2026-07-07T21:00:00.000Z'],
    ['July 7 at 3pm PST', '2026-07-07T22:00:00.000Z'],
    ['January 12 at 3pm CEST', '2027-01-12T14:00:00.000Z'],
    ['Tuesday at 3pm Alaska time', '2026-03-04T00:00:00.000Z'],
    ['Tuesday at 3pm Hawaii time', '2026-03-04T01:00:00.000Z'],
    ['Tuesday at 3pm HST', '2026-03-04T01:00:00.000Z'],
    ['Tuesday at 3pm London time', '2026-03-03T15:00:00.000Z'],
    ['Tuesday at 3pm Central European time', '2026-03-03T14:00:00.000Z'],
    ['Tuesday at 3pm Eastern European time', '2026-03-03T13:00:00.000Z'],
    // a spoken clock time followed by a zone is still a time
    ['Thursday at half past four Pacific', '2026-03-06T00:30:00.000Z'],
    ['at three Eastern on Thursday works', '2026-03-05T20:00:00.000Z'],
  ])('%j -> %s', (text, expected) => {
    expect(meetingIn([human(text)])).toBe(expected);
  });

  // Chrono read these already (its ET, CT, MT and PT follow US daylight saving): still read the same.
  it.each([
    ['Tuesday at 3 pm ET', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm EST', '2026-03-03T20:00:00.000Z'],
    ['Tuesday at 3pm CT', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm CST', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm MT', '2026-03-03T22:00:00.000Z'],
    ['Tuesday at 3pm PT', '2026-03-03T23:00:00.000Z'],
    ['July 7 at 3pm PT', '2026-07-07T22:00:00.000Z'],
    ['Tuesday at 3pm UTC', '2026-03-03T15:00:00.000Z'],
    ['Tuesday at 3pm GMT', '2026-03-03T15:00:00.000Z'],
    ['Tuesday at 3pm CET', '2026-03-03T14:00:00.000Z'],
  ])('still reads %j -> %s', (text, expected) => {
    expect(meetingIn([human(text)])).toBe(expected);
  });

  it('reads "Eastern" with the offset of the meeting day: UTC-4 in July, UTC-5 in January', () => {
    expect(meetingIn([human('July 7 at 3pm Eastern')])).toBe('2026-07-07T19:00:00.000Z');
    expect(meetingIn([human('January 12 at 3pm Eastern')])).toBe('2027-01-12T20:00:00.000Z');
  });

  it('reads "EST" said for a day in July as New York time, as people mean it', () => {
    expect(meetingIn([human('July 7 at 3pm EST')])).toBe('2026-07-07T19:00:00.000Z');
    expect(meetingIn([human('January 12 at 3pm EDT')])).toBe('2027-01-12T20:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm CET')])).toBe('2026-07-07T13:00:00.000Z');
  });

  it('reads GMT as UTC all year, and London time with British summer time', () => {
    expect(meetingIn([human('July 7 at 3pm GMT')])).toBe('2026-07-07T15:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm London time')])).toBe('2026-07-07T14:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm BST')])).toBe('2026-07-07T14:00:00.000Z');
  });

  it("reads a region's name from a callee who keeps its standard time all year on the callee's clock", () => {
    // Arizona stays on UTC-7 while Denver is on UTC-6
    expect(meetingIn([human('July 7 at 3pm Mountain')], 'America/Phoenix')).toBe('2026-07-07T22:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm MST')], 'America/Phoenix')).toBe('2026-07-07T22:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm Mountain Standard Time')], 'America/Phoenix')).toBe(
      '2026-07-07T22:00:00.000Z',
    );
    expect(meetingIn([human('July 7 at 3pm Mountain')])).toBe('2026-07-07T21:00:00.000Z');
  });

  it("reads a daylight name from such a callee as the region's daylight clock, never the callee's", () => {
    // MDT is UTC-6 (Denver's clock in July); Phoenix is on UTC-7
    expect(meetingIn([human('July 7 at 3pm MDT')], 'America/Phoenix')).toBe('2026-07-07T21:00:00.000Z');
    expect(meetingIn([human('July 7 at 3pm Mountain Daylight Time')], 'America/Phoenix')).toBe(
      '2026-07-07T21:00:00.000Z',
    );
    // CDT is UTC-5 (Chicago's clock in July); Regina is on UTC-6
    expect(meetingIn([human('July 7 at 3pm CDT')], 'America/Regina')).toBe('2026-07-07T20:00:00.000Z');
  });

  it.each([
    // Mountain View, California: not Mountain time, which would be 17:00Z
    ['Tuesday at 10am Mountain View office works', '2026-03-03T16:00:00.000Z'],
    // not Atlantic time (Halifax, UTC-4), which would be 19:00Z
    ['Tuesday at 3pm Atlantic City works', '2026-03-03T21:00:00.000Z'],
    // not Pacific time, which chrono would read in "PT" too: 23:00Z
    ['Tuesday at 3pm PT session works', '2026-03-03T21:00:00.000Z'],
    // Mount Vernon, not Mountain time: 22:00Z
    ['Tuesday at 3pm, Mt. Vernon office', '2026-03-03T21:00:00.000Z'],
  ])("reads %j in the callee's zone: a name followed by another word is no zone -> %s", (text, expected) => {
    expect(meetingIn([human(text)])).toBe(expected);
  });

  it.each([
    // India (UTC+5:30), Ireland or Israel: not guessed, read in Chicago as without it
    ['Tuesday at 3pm IST', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm AST', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm my time', '2026-03-03T21:00:00.000Z'],
    ['Tuesday at 3pm local time', '2026-03-03T21:00:00.000Z'],
  ])("reads %j in the callee's zone -> %s", (text, expected) => {
    expect(meetingIn([human(text)])).toBe(expected);
  });
});

describe('findFixedMeetingTime: a zone in a proposal and its answer', () => {
  const proposal = agent('Would Thursday at 2pm Eastern suit you?');
  const thursdayAt2Eastern = '2026-03-05T19:00:00.000Z';

  it.each(['Yes', 'Thursday works', 'Yes, Thursday at 2 is great'])('%j agrees to 2pm Eastern', (reply) => {
    expect(meetingIn([proposal, human(reply)])).toBe(thursdayAt2Eastern);
  });

  it("reads a counter-proposal's time in the proposal's zone unless the callee names their own", () => {
    expect(meetingIn([proposal, human('Can we make it 4?')])).toBe('2026-03-05T21:00:00.000Z');
    expect(meetingIn([proposal, human('Could we do 4 my time instead?')])).toBe('2026-03-05T22:00:00.000Z');
    expect(meetingIn([proposal, human('Could we do 4 Pacific instead?')])).toBe('2026-03-06T00:00:00.000Z');
  });

  it('withdraws an agreed zoned time the callee refuses, then takes the next one agreed', () => {
    const utterances = [
      human('Tuesday at 3pm Eastern works'),
      agent('Great.'),
      human("Actually I can't do 3pm Eastern on Tuesday"),
    ];
    expect(meetingIn(utterances)).toBeNull();
    const next = [...utterances, agent('How about Wednesday at 3pm Eastern?'), human('Yes')];
    expect(meetingIn(next)).toBe('2026-03-04T20:00:00.000Z');
  });
});
