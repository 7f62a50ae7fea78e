// Wall-clock time in an IANA time zone <-> instants, for the meeting time (meeting-time.ts).
//
// Temporal does the zone arithmetic (the temporal-polyfill package until Node ships Temporal), so
// an offset is the one in force on the day in question: a meeting after a daylight-saving change
// lands on the right instant. A wall time that does not exist (skipped by a spring-forward change)
// moves forward by the gap and an ambiguous one (repeated by a fall-back change) takes the earlier
// instant: Temporal's 'compatible' disambiguation. Not for workflows: this runs in activities.
import { Temporal } from 'temporal-polyfill';

/** A calendar day as written: a Temporal.PlainDate or its fields. */
export type WallDate = Temporal.PlainDate | Temporal.PlainDateLike;
/** A time of day as written: a Temporal.PlainTime or its fields. */
export type WallTime = Temporal.PlainTime | Temporal.PlainTimeLike;

/** The instant in the zone; RangeError for a zone name Temporal does not know. */
function zonedAt(instantMs: number, timeZone: string): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(instantMs).toZonedDateTimeISO(timeZone);
}

/** Minutes the zone is ahead of UTC at an instant (New York in winter: -300). */
export function zoneOffsetMinutes(instantMs: number, timeZone: string): number {
  // Whole minutes, as chrono takes them; only old local mean times had seconds in their offsets.
  return Math.round(zonedAt(instantMs, timeZone).offsetNanoseconds / 60e9);
}

/** The day on the zone's wall clock at an instant. */
export function wallDateAt(instantMs: number, timeZone: string): Temporal.PlainDate {
  return zonedAt(instantMs, timeZone).toPlainDate();
}

/** The instant (epoch milliseconds) a wall-clock time in the zone names (see the header for gaps and overlaps). */
export function wallTimeToInstant(date: WallDate, time: WallTime, timeZone: string): number {
  return Temporal.PlainDate.from(date).toPlainDateTime(time).toZonedDateTime(timeZone, { disambiguation: 'compatible' })
    .epochMilliseconds;
}

/** The instant a wall-clock time names at a fixed offset from UTC, as "3pm EST" states one. */
export function wallTimeAtOffset(date: WallDate, time: WallTime, offsetMinutes: number): number {
  return wallTimeToInstant(date, time, 'UTC') - offsetMinutes * 60_000;
}
