/** Bytes per unit of the size strings the config accepts ("512KB", "16MB", "1GB"; binary multiples). */
const UNIT_BYTES = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 } as const;

const SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB)$/i;
const UNITS = ['B', 'KB', 'MB', 'GB'] as const;

/** Parses a size string to bytes, or undefined when it is not one. */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const unit = UNITS.find((name) => name === match[2]?.toUpperCase());
  if (unit === undefined) return undefined;
  return Math.floor(Number(match[1]) * UNIT_BYTES[unit]);
}

/** Formats bytes for messages in the largest unit that holds them whole ("16MB", "1536B"). */
export function formatSize(bytes: number): string {
  for (const unit of ['GB', 'MB', 'KB'] as const) {
    if (bytes >= UNIT_BYTES[unit] && bytes % UNIT_BYTES[unit] === 0) {
      return `${bytes / UNIT_BYTES[unit]}${unit}`;
    }
  }
  return `${bytes}B`;
}
