/**
 * What `npm start` shows of `wrangler dev`'s output: one line per run, warnings and errors;
 * not the bindings table (printed again on every reconnect), the request log (the dashboard
 * polls every 5 s), the banner, or the advice to trigger crons by hand (npm start fires them).
 */
import { stripVTControlCharacters } from 'node:util';

/**
 * Keeps both ends of a long message (where it happened and what the upstream said), cut at
 * spaces: a word is kept whole or left out, never shown by its tail ("…P 503").
 */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = max / 2;
  const head = text.slice(0, half);
  const tail = text.slice(-half);
  const headCut = head.lastIndexOf(' ');
  const tailCut = tail.indexOf(' ');
  const start = headCut > half / 2 ? head.slice(0, headCut) : head;
  const end = tailCut >= 0 && tailCut < half / 2 ? tail.slice(tailCut + 1) : tail;
  return `${start} … ${end}`;
}

/** One terminal line for a run's structured log line. */
export function describeRun(line: Record<string, unknown>, now: number): string {
  const checkpoint = typeof line.checkpoint === 'string' ? line.checkpoint : null;
  const lag = checkpoint ? `${Math.round((now - Date.parse(checkpoint)) / 1000)}s` : '-';
  const error = typeof line.error === 'string' ? `  (${shorten(line.error, 160)})` : '';
  // Dead letters are what a person must act on: a run that made any says so.
  const dead =
    typeof line.deadLettered === 'number' && line.deadLettered > 0
      ? `  dead-lettered ${line.deadLettered}`
      : '';
  return `run  ${String(line.poller).padEnd(16)} ${String(line.outcome).padEnd(10)} records ${String(line.records).padStart(4)}${dead}  checkpoint ${checkpoint ?? '-'}  lag ${lag}${error}`;
}

/** Single lines that say nothing to a demo user. */
const NOISE = [
  /^\s*$/,
  /^\[wrangler:info\] /, // the request log, and "Ready on" (npm start prints its own)
  /^\s*⛅️ wrangler /,
  /^─+$/,
  /^Using secrets defined in /,
  /^⎔ /, // "Starting local server...", "Connection status updated", "Reloading..."
  /^Service bindings, Durable Object bindings, and Tail consumers connect to other/,
  /Scheduled Workers are not automatically triggered during local development/,
  /^\s*To manually trigger a scheduled event, run:/,
  /^\s*curl "http:\/\/[^"]*\/cdn-cgi\/local\/scheduled"/,
  /^\s*For more details, see https:\/\/developers\.cloudflare\.com\/workers\/configuration\/cron-triggers/,
  /Unable to fetch the `Request\.cf` object/, // offline: no cf lookups
  /getaddrinfo ENOTFOUND workers\.cloudflare\.com/,
  /^\s+at .*(GetAddrInfoReqWrap|callbackTrampoline)/,
];

/** The first line of the bindings table, and the lines of the table itself. */
const BINDINGS_TITLE = /^(Your Worker|.+) has access to the following bindings:$/;
const BINDINGS_ROW = /^(Binding\s+Resource|env\.\S+ )/;

/**
 * A filter for wrangler dev's lines, one at a time: the text to print, or undefined to drop
 * the line. `verbose` keeps everything (run lines are still made readable).
 */
export function createDevOutputFilter(
  options: { verbose?: boolean; now?: () => number } = {},
): (raw: string) => string | undefined {
  const now = options.now ?? Date.now;
  let inBindings = false;
  return (raw) => {
    const start = raw.indexOf('{"event"');
    if (start >= 0) {
      try {
        const line = JSON.parse(raw.slice(start)) as Record<string, unknown>;
        if (line.event === 'run') return describeRun(line, now());
        if (line.event === 'nudge') {
          const at = typeof line.run_at === 'string' ? `  run at ${line.run_at}` : '';
          return `nudge  ${String(line.poller).padEnd(16)} ${String(line.outcome)}${at}`;
        }
        if (line.event === 'admin') {
          return `admin  ${String(line.poller).padEnd(16)} ${String(line.action)}  ${JSON.stringify(line.detail ?? {})}`;
        }
        return `${String(line.event)}  ${JSON.stringify(line)}`;
      } catch {
        // not ours: shown as any other line
      }
    }
    if (options.verbose) return raw;
    const text = stripVTControlCharacters(raw);
    if (BINDINGS_TITLE.test(text.trim())) {
      inBindings = true;
      return undefined;
    }
    if (inBindings && BINDINGS_ROW.test(text)) return undefined;
    inBindings = false;
    if (NOISE.some((pattern) => pattern.test(text))) return undefined;
    return raw;
  };
}
