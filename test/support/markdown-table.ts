/**
 * Reading the docs' tables in tests that check them against the code. A section runs from
 * its heading line to the next heading of the same or a higher level, outside code blocks.
 */
export function markdownSection(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`no "${heading}" heading`);
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  let code = false;
  const end = lines.findIndex((line, i) => {
    if (i <= start) return false;
    if (line.startsWith('```')) code = !code;
    const hashes = code ? undefined : /^(#+) /.exec(line)?.[1];
    return hashes !== undefined && hashes.length <= level;
  });
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/**
 * The body rows of the first table in a markdown text, as trimmed cells (header and
 * separator rows left out). A `\|` inside a cell does not split it.
 */
export function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  if (first < 0) return [];
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  return lines
    .slice(first + 2, end < 0 ? undefined : end) // after the header and its separator
    .map((line) =>
      line
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}
