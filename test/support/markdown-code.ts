/**
 * Reading the code a markdown page shows, for the tests that run a guide's commands and
 * snippets as written: the page and its test cannot drift apart.
 */

/** One fenced code block: its info string (`sh`, `toml`, `js`, or ''), its text, and where. */
export interface CodeBlock {
  lang: string;
  text: string;
  /** The 1-based line of its opening fence. */
  line: number;
}

/** Every fenced block of a markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { fence: string; lang: string; line: number; lines: string[] } | undefined;
  for (const [index, line] of markdown.split('\n').entries()) {
    const marker = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/.exec(line);
    if (open === undefined) {
      if (marker?.[1] !== undefined) {
        open = { fence: marker[1], lang: marker[2] ?? '', line: index + 1, lines: [] };
      }
    } else if (marker?.[1]?.startsWith(open.fence) && marker[2] === '') {
      blocks.push({ lang: open.lang, text: open.lines.join('\n'), line: open.line });
      open = undefined;
    } else {
      open.lines.push(line);
    }
  }
  if (open !== undefined) throw new Error(`a code block opened on line ${open.line} never closes`);
  return blocks;
}

/** A shell command as a page shows it, and the output it says the command prints. */
export interface ShellCommand {
  command: string;
  /** Each `# → text` line under the command: a text its output holds. */
  prints: string[];
  /** The line of its block's opening fence. */
  line: number;
}

/**
 * The commands of every ```sh block: each line that is not blank and not a comment is one
 * command; a `# → …` line under a command is output it promises. A `# →` line with no
 * command above it in its block is an error, as is a command continued with `\`.
 */
export function shellCommands(markdown: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  for (const block of codeBlocks(markdown).filter(({ lang }) => lang === 'sh')) {
    let last: ShellCommand | undefined;
    for (const line of block.text.split('\n')) {
      const promise = /^#\s*→\s*(.+)$/.exec(line);
      if (promise?.[1] !== undefined) {
        if (last === undefined) {
          throw new Error(`line ${block.line}: "${line}" promises output of no command`);
        }
        last.prints.push(promise[1].trim());
      } else if (line.trim() !== '' && !line.trimStart().startsWith('#')) {
        if (line.trimEnd().endsWith('\\')) {
          throw new Error(`line ${block.line}: a command continued on the next line: ${line}`);
        }
        last = { command: line.trim(), prints: [], line: block.line };
        commands.push(last);
      }
    }
  }
  return commands;
}
