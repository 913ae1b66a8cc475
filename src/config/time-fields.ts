import * as z from 'zod';
import { precisionOf, TIME_FORMAT_WORDS, timeFormatProblem } from '../sources/time.ts';
import { isTimeZone } from '../sources/time-zone.ts';
import { formatDuration } from './duration.ts';

/** A word (offered to editors by the JSON Schema) or a pattern, checked as sources/time.ts reads it. */
const format = (stamps: boolean) =>
  z
    .union([z.enum(stamps ? ['auto', ...TIME_FORMAT_WORDS] : TIME_FORMAT_WORDS), z.string()])
    .superRefine((text, ctx) => {
      const problem = timeFormatProblem(text, stamps);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });

/** `source.time_format`: how window bounds are sent. */
export const timeFormat = format(false);

/** `source.updated_at_format`: how stamps are read (`auto` besides the time formats). */
export const stampFormat = format(true);

/** `source.time_zone`: an IANA name the runtime's Intl knows (workerd and Node carry the same data). */
export const timeZoneName = z.string().superRefine((name, ctx) => {
  if (!isTimeZone(name)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${name}" is not a time zone: an IANA name, as "America/Los_Angeles" or "UTC"`,
    });
  }
});

const UNITS: [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];
const unitOf = (ms: number) => UNITS.find(([unit]) => unit === ms)?.[1] ?? `${ms} ms`;

interface TimedPoller {
  lag_allowance: number;
  overlap: number;
  max_window?: number | undefined;
  source: { time_format: string; updated_at_format: string };
}

/** What a config's time formats make unsafe, as `[path, message]` issues. */
export function timeProblems(poller: TimedPoller): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  // A bounded window's end is floored to what the time format can say (whole seconds for
  // "unix", minutes for "yyyy/MM/dd HH:mm"): a window shorter than that step past the
  // overlap would end at C and never move.
  const { time_format, updated_at_format } = poller.source;
  const step = precisionOf(time_format);
  if (poller.max_window !== undefined && poller.max_window - poller.overlap < step) {
    problems.push({
      path: ['max_window'],
      message:
        step === 1
          ? 'must be greater than overlap, or a window would never get past the checkpoint'
          : `must exceed overlap by at least ${formatDuration(step)} with time_format = "${time_format}": window ends are whole ${unitOf(step)}s, so a shorter window would end at the checkpoint and never move`,
    });
  }
  // R1: C ← T − lag_allowance. A change at 10:00:50 stamped "10:00" reads as 10:00:00, below
  // a checkpoint of 10:00:30, and an upstream asked from there never shows it again.
  const stamps = precisionOf(updated_at_format);
  if (stamps >= 60_000 && poller.lag_allowance < stamps) {
    const unit = unitOf(stamps);
    problems.push({
      path: ['lag_allowance'],
      message: `must be at least ${formatDuration(stamps)} with updated_at_format = "${updated_at_format}": its stamps are whole ${unit}s, so a change reads as older than it is by up to a ${unit}, and a checkpoint less than a ${unit} behind the run's start would pass it`,
    });
  }
  return problems;
}
