/** Milliseconds per unit of the duration strings the config accepts ("500ms", "30s", "15m", "1h", "7d"). */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNITS = ['ms', 's', 'm', 'h', 'd'] as const;

/** Parses a duration string to milliseconds, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const unit = UNITS.find((name) => name === match[2]);
  if (unit === undefined) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[unit]);
}

/** Formats milliseconds for messages, largest units first ("15m", "10m30s", "1d2h"). */
export function formatDuration(ms: number): string {
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const count = Math.floor(rest / UNIT_MS[unit]);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * UNIT_MS[unit];
  }
  return text || '0s';
}
