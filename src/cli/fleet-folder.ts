import { parse as parseToml, TomlError } from 'smol-toml';
import { pollerNameProblem } from '../config/poller-name.ts';
import { isObject } from './api.ts';
import type { FolderFile } from './io.ts';

/** One poller of the folder: named by its file, its config as the PUT will send it. */
export interface DesiredPoller {
  name: string;
  /** The file's path, for messages: `fleet/acme-tickets.toml`. */
  file: string;
  /** The config as JSON values (TOML dates become their text), `$schema` taken out. */
  config: Record<string, unknown>;
}

export type FolderRead =
  | { ok: true; pollers: DesiredPoller[]; ignored: string[] }
  | { ok: false; errors: string[] };

/** A file's text read, or why not (`at`: its line and column, when the parser knows them). */
type Parsed = { ok: true; value: unknown } | { ok: false; at?: string; error: string };

/** How each kind of file is read: a new format is one entry here. */
const FORMATS = {
  toml: (text): Parsed => {
    try {
      return { ok: true, value: parseToml(text) };
    } catch (error) {
      if (!(error instanceof TomlError)) throw error;
      const message = (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '');
      return {
        ok: false,
        at: `${error.line}:${error.column}`,
        error: `TOML syntax error: ${message}`,
      };
    }
  },
  json: (text): Parsed => {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (error) {
      return { ok: false, error: `JSON syntax error: ${(error as Error).message}` };
    }
  },
} satisfies Record<string, (text: string) => Parsed>;

export type Format = keyof typeof FORMATS;

/** Extensions of configs written in a format apply does not read: errors, never ignored. */
const MISTAKEN_FORMATS = ['yaml', 'yml'];

/**
 * Reads a folder of poller configs, one file per poller named like the poller (`NAME.toml` or
 * `NAME.json`), and checks all of it before anything is sent: every problem, each naming its
 * file. YAML is an error (it looks like a config); other files (a README) are ignored and
 * listed.
 */
export function readFleetFolder(dir: string, files: readonly FolderFile[]): FolderRead {
  const errors: string[] = [];
  const pollers: DesiredPoller[] = [];
  const ignored: string[] = [];
  const fileOf = new Map<string, string>();
  for (const { name: fileName, text } of [...files].sort((a, b) => a.name.localeCompare(b.name))) {
    const file = `${dir.replace(/\/+$/, '')}/${fileName}`;
    const dot = fileName.lastIndexOf('.');
    const extension = fileName.slice(dot + 1).toLowerCase();
    if (MISTAKEN_FORMATS.includes(extension)) {
      // A config in a format apply does not read: ignored, --prune would delete its poller.
      errors.push(`${file}: apply reads TOML and JSON only: write it as NAME.toml or NAME.json`);
      continue;
    }
    if (dot <= 0 || !Object.hasOwn(FORMATS, extension)) {
      ignored.push(file);
      continue;
    }
    const name = fileName.slice(0, dot);
    const nameProblem = pollerNameProblem(name);
    if (nameProblem !== null) {
      errors.push(`${file}: the file's name is the poller's: ${nameProblem}`);
      continue;
    }
    const twin = fileOf.get(name);
    if (twin !== undefined) {
      errors.push(`${file}: poller "${name}" is also ${twin}: keep one file per poller`);
      continue;
    }
    fileOf.set(name, file);
    const read = readConfigFile(file, extension as Format, text);
    if (!read.ok) {
      errors.push(read.error);
      continue;
    }
    pollers.push({ name, file, config: read.config });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, pollers, ignored };
}

/** How a config file is read: by its extension (`toml`, `json`); undefined for any other. */
export function configFormat(fileName: string): Format | undefined {
  const dot = fileName.lastIndexOf('.');
  const extension = fileName.slice(dot + 1).toLowerCase();
  return dot > 0 && Object.hasOwn(FORMATS, extension) ? (extension as Format) : undefined;
}

/**
 * One poller's config file, read as apply reads each file of a folder: one table of keys,
 * as the API will take it. Errors name the file (and the line, when the parser knows it).
 */
export function readConfigFile(
  file: string,
  format: Format,
  text: string,
): { ok: true; config: Record<string, unknown> } | { ok: false; error: string } {
  const parsed = FORMATS[format](text);
  if (!parsed.ok) {
    return {
      ok: false,
      error: `${file}${parsed.at === undefined ? '' : `:${parsed.at}`}: ${parsed.error}`,
    };
  }
  if (!isObject(parsed.value)) {
    return {
      ok: false,
      error: `${file}: must be one poller's config (a table of keys), not ${kindOf(parsed.value)}`,
    };
  }
  return { ok: true, config: asJson(parsed.value) };
}

/**
 * The config as the API will store it: JSON values only (a TOML date is sent as its text),
 * without the editor's `$schema` key, which is not part of a poller's config.
 */
function asJson(value: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _editorOnly, ...config } = JSON.parse(JSON.stringify(value)) as Record<
    string,
    unknown
  >;
  return config;
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
