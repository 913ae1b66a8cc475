/**
 * Proleptic Gregorian calendar arithmetic on epoch milliseconds (Howard Hinnant's
 * algorithms): integer arithmetic, where Date.UTC and its getters are calls into the
 * runtime, and Date.UTC takes the years 0 to 99 for 1900 to 1999.
 */

export const DAY_MS = 86_400_000;

/** Days from 1970-01-01 to a date (days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The fields of a wall-clock time (a time "as if UTC"), to the millisecond. */
export interface Civil {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

/** A date and time of day from epoch milliseconds read as UTC (civil_from_days). */
export function civilFromMs(at: number): Civil {
  const days = Math.floor(at / DAY_MS);
  const inDay = at - days * DAY_MS;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return {
    year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0),
    month,
    day,
    hour: Math.floor(inDay / 3_600_000),
    minute: Math.floor(inDay / 60_000) % 60,
    second: Math.floor(inDay / 1000) % 60,
    ms: inDay % 1000,
  };
}

/** Epoch milliseconds of a wall-clock time read as UTC. */
export function msFromCivil(c: Civil): number {
  return (
    daysFromCivil(c.year, c.month, c.day) * DAY_MS +
    ((c.hour * 60 + c.minute) * 60 + c.second) * 1000 +
    c.ms
  );
}

/** How many days a month has. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
