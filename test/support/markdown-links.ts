import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * Reading Markdown's headings and links the way GitHub renders them, for the tests that keep
 * the README and docs/ linked together. Code (fenced blocks and `spans`) holds no heading and
 * no link.
 */

/** The text with every fenced code block blanked, line for line, so line numbers stay. */
function outsideCode(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = undefined;
      }
      return '';
    }
    return line;
  });
}

/**
 * GitHub's anchor for a heading (github-slugger): its text as rendered (a link's text, no
 * backticks), lowercased, every character but letters, digits, `_`, `-` and spaces removed,
 * spaces made hyphens.
 */
export function slug(title: string): string {
  return title
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** The headings of a markdown text outside code blocks: level and title, in order. */
export function headings(text: string): { level: number; title: string }[] {
  return outsideCode(text).flatMap((line) => {
    const match = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    return match?.[1] && match[2] ? [{ level: match[1].length, title: match[2] }] : [];
  });
}

/** Every anchor the headings of a markdown text get on GitHub; a repeat gets -1, -2 … */
export function headingAnchors(text: string): Set<string> {
  const occurrences = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { title } of headings(text)) {
    const original = slug(title);
    let anchor = original;
    while (occurrences.has(anchor)) {
      const n = (occurrences.get(original) ?? 0) + 1;
      occurrences.set(original, n);
      anchor = `${original}-${n}`;
    }
    occurrences.set(anchor, 0);
    anchors.add(anchor);
  }
  return anchors;
}

/** A link's target as written, and the line it is on (1-based). */
export type Link = { line: number; target: string };

/**
 * The targets of every inline link and image (`[text](target)`, `![alt](target "title")`) and
 * every reference definition (`[name]: target`) outside code. Inline code spans are blanked
 * first, so that `[x](y)` written as code is not a link, while a link whose text is code is.
 */
export function links(text: string): Link[] {
  const prose = outsideCode(text)
    .join('\n')
    .replace(/``[\s\S]*?``|`[^`]*`/g, (span) => span.replace(/[^\n]/g, ' '));
  const lineOf = (index: number) => prose.slice(0, index).split('\n').length;
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)];
  const defined = [...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)];
  return [...inline, ...defined]
    .map((match) => ({ line: lineOf(match.index ?? 0), target: match[1] ?? '' }))
    .sort((a, b) => a.line - b.line);
}

/** Whether a target leaves the project (a URL with a scheme, or protocol-relative). */
function external(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The relative links of the markdown file `file` (a path from the project root) that lead
 * nowhere: to a file that does not exist, or to a `#anchor` that no heading of the target
 * (this file, for `#anchor` alone) has. `read` gives a file's text, or undefined when it
 * does not exist; a directory is given as ''.
 */
export function brokenLinks(
  file: string,
  read: (path: string) => string | undefined = readProjectFile,
): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: no such file`];
  const broken: string[] = [];
  for (const { line, target } of links(text)) {
    if (external(target)) continue;
    const hash = target.indexOf('#');
    const path = hash < 0 ? target : target.slice(0, hash);
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    const where = `${file}:${line}: ${target}`;
    const body = read(resolved);
    if (body === undefined) broken.push(`${where}: no file ${resolved}`);
    else if (anchor !== undefined && !resolved.endsWith('.md')) {
      broken.push(`${where}: an anchor into ${resolved}, which is not markdown`);
    } else if (anchor !== undefined && !headingAnchors(body).has(anchor)) {
      broken.push(`${where}: no heading #${anchor} in ${resolved}`);
    }
  }
  return broken;
}

/** A project file's text ('' for a directory), or undefined when there is none. */
function readProjectFile(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? '' : readFileSync(path, 'utf8');
}
