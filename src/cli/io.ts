/**
 * What the CLI needs from the world, passed in so that its core runs anywhere (Node through
 * bin/tidemark.ts, workerd in the tests): no Node import below src/cli/.
 */

/** The part of a fetch Response the CLI reads. */
export interface HttpReply {
  readonly status: number;
  /** A redirect's Location is read from here (a stand-in without headers has none). */
  readonly headers?: { get(name: string): string | null };
  text(): Promise<string>;
}

/**
 * A fetch the CLI calls with a URL string and plain headers, which any fetch accepts. It
 * never follows a redirect (`redirect: "manual"`): the token and a secret's value would go
 * with it to wherever the Location points.
 */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; redirect: 'manual' },
) => Promise<HttpReply>;

/** One file of a folder, by its name (no path) and its text. */
export interface FolderFile {
  name: string;
  text: string;
}

export interface CliIo {
  /** The words after `tidemark`. */
  argv: readonly string[];
  /** TIDEMARK_URL and TIDEMARK_TOKEN are read from here, and nothing else. */
  env: Readonly<Record<string, string | undefined>>;
  fetch: Fetch;
  /** One file's text; throws when it cannot be read. */
  readFile(path: string): Promise<string>;
  /** The regular files directly in a folder (not its subfolders); throws when it cannot be read. */
  readDir(path: string): Promise<FolderFile[]>;
  /** All of stdin; null when nothing is piped in (a terminal), so a secret is never typed on screen. */
  readStdin(): Promise<string | null>;
  stdout(text: string): void;
  stderr(text: string): void;
}
