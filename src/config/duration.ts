/** Milliseconds per unit of the duration strings the config accepts ("500ms", "30s", "15m", "1h", "7d"). */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** Parses a duration string to milliseconds, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const [, amount, unit] = match as unknown as [string, string, keyof typeof UNIT_MS];
  return Math.round(Number(amount) * UNIT_MS[unit]);
}

/** Formats milliseconds back into the largest exact unit, for messages ("15m", "90s"). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
