/** Rows as aligned columns (the last one unpadded), the way `kubectl get` prints them. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, column) => {
      widths[column] = Math.max(widths[column] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Pretty JSON, for `--json` and for a stored config. */
export const json = (value: unknown) => JSON.stringify(value, null, 2);
