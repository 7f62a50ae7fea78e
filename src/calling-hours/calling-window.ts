// Calling hours of a call template: on which weekdays and between which wall-clock times a callee
// may be rung, checked in the callee's own time zone(s). Where a number belongs to several zones,
// only the hours allowed in all of them count. Pure functions over Temporal (temporal-polyfill), run
// at create and in activities, never in workflow code (zone data is not part of a workflow's history).
import { Temporal } from 'temporal-polyfill';

/** ISO weekday numbers: 1 is Monday, 7 is Sunday. */
export type IsoWeekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

export interface CallingHoursRule {
  days: IsoWeekday[];
  /** `HH:MM`, the first minute a call may be placed. */
  start: string;
  /** `HH:MM` (or `24:00`), the first minute no call may be placed any more. */
  end: string;
}

export interface CallingWindow {
  rules: CallingHoursRule[];
  /** Callee-local dates (`YYYY-MM-DD`) with no calls at all, such as public holidays. */
  skipDates: string[];
}

export type WindowCheck =
  | { open: true; closesAt: number }
  | { open: false; opensAt: number }
  /** The window does not open within the horizon in every one of the zones at once. */
  | { open: false; opensAt: null };

export class CallingWindowError extends Error {
  override readonly name = 'CallingWindowError';
}

const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const TIME = /^(?:([01]\d|2[0-3]):([0-5]\d)|(24):(00))$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** How far ahead an opening is looked for: a year, so that a run of skipped dates cannot hide one. */
const HORIZON_DAYS = 370;
/** Days computed per step of the search: most windows open within the first. */
const STEP_DAYS = 14;

function minutesOf(time: string, what: string): number {
  const match = TIME.exec(time);
  if (!match)
    throw new CallingWindowError(`${what} must be a time of day written HH:MM (00:00 to 24:00), got "${time}"`);
  return Number(match[1] ?? match[3]) * 60 + Number(match[2] ?? match[4]);
}

const FULL_DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** `Mon`, `Tues`, `Wednesday`: a day's name or its start, three letters at least (not `Monkey`). */
function weekdayOf(name: string): IsoWeekday {
  const lower = name.toLowerCase();
  const index = FULL_DAY_NAMES.findIndex((day) => lower.length >= 3 && day.startsWith(lower));
  if (index < 0) throw new CallingWindowError(`"${name}" is not a day of the week (Mon, Tue, ... Sun)`);
  return (index + 1) as IsoWeekday;
}

/** `Mon-Fri`, `Sat,Sun`, `Fri-Mon` (wrapping), `daily`. */
function parseDays(text: string): IsoWeekday[] {
  if (/^(daily|every ?day)$/i.test(text)) return [1, 2, 3, 4, 5, 6, 7];
  const days = new Set<IsoWeekday>();
  for (const part of text.split(',')) {
    const [from, to, ...rest] = part.trim().split('-');
    if (rest.length || !from) throw new CallingWindowError(`"${part}" is not a day or a range of days`);
    const first = weekdayOf(from);
    const last = to === undefined ? first : weekdayOf(to);
    for (let day = first; ; day = ((day % 7) + 1) as IsoWeekday) {
      days.add(day);
      if (day === last) break;
    }
  }
  return [...days].sort();
}

/** One rule as operators write it: `Mon-Fri 09:00-20:00`. */
export function parseCallingHoursRule(text: string): CallingHoursRule {
  // Days (a list may have spaces after its commas), then two times, each checked on its own so that a
  // refusal names what is wrong with it (`9:00` is not HH:MM).
  const match = /^\s*(\S+(?:,\s*\S+)*)\s+([\d:]+)\s*-\s*([\d:]+)\s*$/.exec(text);
  if (!match) throw new CallingWindowError(`calling hours must look like "Mon-Fri 09:00-20:00", got "${text}"`);
  const rule = { days: parseDays(match[1]!), start: match[2]!, end: match[3]! };
  validateRule(rule);
  return rule;
}

function validateRule(rule: CallingHoursRule): void {
  if (rule.days.length === 0) throw new CallingWindowError('calling hours need at least one day of the week');
  const start = minutesOf(rule.start, 'the start');
  const end = minutesOf(rule.end, 'the end');
  if (end === 0 && start > 0)
    throw new CallingWindowError(`calling hours ${rule.start}-${rule.end} end at midnight: write the end as 24:00`);
  if (start > end)
    throw new CallingWindowError(
      `calling hours ${rule.start}-${rule.end} cross midnight, which one rule cannot: write two rules, ` +
        `one to 24:00 and one from 00:00 on the days after (e.g. "Mon-Fri ${rule.start}-24:00" and ` +
        `"Tue-Sat 00:00-${rule.end}")`,
    );
  if (start === end)
    throw new CallingWindowError(
      `calling hours ${rule.start}-${rule.end} are empty: the start must come before the end`,
    );
}

/**
 * Checks a window as a template stores it; refuses one that can never open (no rule, no day, an
 * empty time range, a malformed skip date).
 */
export function validateCallingWindow(window: CallingWindow): CallingWindow {
  if (window.rules.length === 0) throw new CallingWindowError('a calling window needs at least one rule');
  window.rules.forEach(validateRule);
  validateSkipDates(window.skipDates);
  return window;
}

/** Refuses a skip date that is not a real date written YYYY-MM-DD. */
export function validateSkipDates(skipDates: readonly string[]): void {
  for (const date of skipDates) {
    if (!DATE.test(date)) throw new CallingWindowError(`a skip date must be written YYYY-MM-DD, got "${date}"`);
    try {
      Temporal.PlainDate.from(date, { overflow: 'reject' });
    } catch {
      throw new CallingWindowError(`${date} is not a date of the calendar`);
    }
  }
}

/** One line per rule, as the CLI shows a template: `Mon-Fri 09:00-20:00`. */
export function describeCallingWindow(window: CallingWindow): string {
  const days = (list: IsoWeekday[]) =>
    list.map((d) => DAY_NAMES[d - 1]!.replace(/^./, (c) => c.toUpperCase())).join(',');
  const rules = window.rules.map((r) => `${days(r.days)} ${r.start}-${r.end}`).join('; ');
  return window.skipDates.length ? `${rules}; not on ${window.skipDates.join(', ')}` : rules;
}

type Interval = [start: number, end: number];

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The instants at which the clock in `timeZone` shows a time of `date` from `start` up to (not
 * including) `end`, in minutes of the day. While the zone's UTC offset holds, those are the wall times
 * less the offset, cut to the stretch the offset holds for. So a bound in the hour a spring-forward
 * change skips takes effect when the clock jumps, and the hour a fall-back change repeats is open each
 * time the clock shows a time within the hours: never an instant whose wall time lies outside them.
 */
function wallIntervals(date: Temporal.PlainDate, start: number, end: number, timeZone: string): Interval[] {
  // Wall times written as if they were UTC; `end` may be 24:00, the next day's midnight.
  const midnight = Date.UTC(date.year, date.month - 1, date.day);
  const [wallStart, wallEnd] = [midnight + start * 60_000, midnight + end * 60_000];
  const intervals: Interval[] = [];
  // An offset is less than a day: no instant a day or more from these wall times can show them.
  const first = Temporal.Instant.fromEpochMilliseconds(wallStart - DAY_MS);
  let stretch: Temporal.ZonedDateTime | null = first.toZonedDateTimeISO(timeZone);
  while (stretch && stretch.epochMilliseconds < wallEnd + DAY_MS) {
    const next: Temporal.ZonedDateTime | null = stretch.getTimeZoneTransition('next');
    const offset = stretch.offsetNanoseconds / 1e6;
    const from = Math.max(stretch.epochMilliseconds, wallStart - offset);
    const to = Math.min(next?.epochMilliseconds ?? Infinity, wallEnd - offset);
    if (from < to) intervals.push([from, to]);
    stretch = next;
  }
  return intervals;
}

/** The window's open intervals in one zone for the callee-local days [firstDay, firstDay + days). */
function intervalsInZone(
  window: CallingWindow,
  timeZone: string,
  firstDay: Temporal.PlainDate,
  days: number,
): Interval[] {
  const skipped = new Set(window.skipDates);
  const intervals: Interval[] = [];
  for (let i = 0; i < days; i += 1) {
    const date = firstDay.add({ days: i });
    if (skipped.has(date.toString())) continue;
    for (const rule of window.rules) {
      if (!rule.days.includes(date.dayOfWeek as IsoWeekday)) continue;
      const [start, end] = [minutesOf(rule.start, 'the start'), minutesOf(rule.end, 'the end')];
      intervals.push(...wallIntervals(date, start, end, timeZone));
    }
  }
  return merge(intervals);
}

function merge(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: Interval[] = [];
  for (const [start, end] of sorted) {
    const last = out[out.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i]![0], b[j]![0]);
    const end = Math.min(a[i]![1], b[j]![1]);
    if (start < end) out.push([start, end]);
    if (a[i]![1] < b[j]![1]) i += 1;
    else j += 1;
  }
  return out;
}

/**
 * Whether the window is open at `now` in every zone at once, and if so until when; if not, when it
 * next opens. Zones must be IANA names (RangeError otherwise).
 */
export function checkCallingWindow(window: CallingWindow, timeZones: readonly string[], now: number): WindowCheck {
  const zones = timeZones.length ? [...new Set(timeZones)] : ['UTC'];
  // Start a day early in every zone: the callee's "today" may still be yesterday somewhere.
  for (let offset = -1; offset < HORIZON_DAYS; offset += STEP_DAYS) {
    let common: Interval[] | null = null;
    for (const zone of zones) {
      const today = Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO(zone).toPlainDate();
      // One day of overlap between steps so an interval at a step's edge is never cut.
      const intervals = intervalsInZone(window, zone, today.add({ days: offset }), STEP_DAYS + 1);
      common = common === null ? intervals : intersect(common, intervals);
    }
    const next = common!.find(([, end]) => end > now);
    if (!next) continue;
    // An interval that runs on past this step's days is completed by the following step's days.
    const closesAt = next[1];
    return next[0] <= now ? { open: true, closesAt } : { open: false, opensAt: next[0] };
  }
  return { open: false, opensAt: null };
}

/** The shape of a zone name (isTimeZone's first check), as the OpenAPI document gives it for `calleeTimeZone`. */
export const TIME_ZONE_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*$';
const TIME_ZONE_NAME = new RegExp(TIME_ZONE_NAME_PATTERN);

/**
 * A zone name Temporal (and so this module) can use: a name (`America/New_York`, `UTC`,
 * `Etc/GMT+5`), not a fixed offset (`+05:30`, which keeps no daylight saving) nor a date-time string
 * that carries a zone, which Temporal would also read one from.
 */
export function isTimeZone(name: string): boolean {
  if (!TIME_ZONE_NAME.test(name)) return false;
  try {
    Temporal.Now.instant().toZonedDateTimeISO(name);
    return true;
  } catch {
    return false;
  }
}
