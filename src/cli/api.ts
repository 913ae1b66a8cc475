import { CliError } from './errors.ts';
import type { Fetch } from './io.ts';
import { LOCAL_URL } from './local-url.ts';

/** A reply of the admin API: its status and its JSON body (the text when it is not JSON). */
export interface ApiReply {
  status: number;
  body: unknown;
}

export interface Api {
  /** The Worker's address, for messages (never the token). */
  readonly url: string;
  /** One request; a body that is not a string is sent as JSON. Never throws on an HTTP status. */
  call(method: string, path: string, body?: unknown): Promise<ApiReply>;
}

/**
 * The admin API at TIDEMARK_URL with TIDEMARK_TOKEN as the bearer token. Both are required;
 * neither a message nor an error ever shows the token.
 */
export function apiFromEnv(env: Readonly<Record<string, string | undefined>>, fetch: Fetch): Api {
  const address = env.TIDEMARK_URL?.trim();
  if (!address) {
    throw new CliError(
      `TIDEMARK_URL is not set: for npm start, export TIDEMARK_URL=${LOCAL_URL} (its banner prints the whole line to copy); for a deployed Worker, its address, e.g. https://tidemark.example.workers.dev`,
    );
  }
  if (!/^https?:\/\/[^/]/i.test(address)) {
    throw new CliError(
      `TIDEMARK_URL must be an http(s) URL, e.g. https://tidemark.example.workers.dev`,
    );
  }
  if (/^http:/i.test(address) && !isLoopback(address)) {
    // The bearer token would cross the network in the clear.
    throw new CliError(
      `TIDEMARK_URL is plain http to another machine: use https (http is for 127.0.0.1 and localhost, as npm start serves)`,
    );
  }
  const token = env.TIDEMARK_TOKEN?.trim();
  if (!token) {
    throw new CliError(
      'TIDEMARK_TOKEN is not set: export ADMIN_TOKEN (or STATUS_TOKEN, for reads only) as TIDEMARK_TOKEN',
    );
  }
  const base = address.replace(/\/+$/, '');
  return {
    url: base,
    async call(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      let text: string | undefined;
      if (body !== undefined) {
        text = typeof body === 'string' ? body : JSON.stringify(body);
        headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
      }
      let reply: Awaited<ReturnType<Fetch>>;
      try {
        reply = await fetch(`${base}${path}`, {
          method,
          headers,
          ...(text === undefined ? {} : { body: text }),
          redirect: 'manual',
        });
      } catch (error) {
        throw new CliError(`${method} ${base}${path}: ${errorText(error)}`);
      }
      if (reply.status >= 300 && reply.status < 400) {
        // Not followed: the token, and a secret being set, would go wherever it points.
        const location = reply.headers?.get('location') ?? null;
        const where = location === null ? 'without a Location' : `to ${location}`;
        throw new CliError(
          `${method} ${base}${path}: HTTP ${reply.status} redirect ${where}, not followed (the token and what was sent would go with it): set TIDEMARK_URL to the Worker's own address`,
        );
      }
      const received = await reply.text();
      return { status: reply.status, body: parsedOrText(received) };
    },
  };
}

/** `http://127.0.0.1:8787`, `http://localhost`, `http://[::1]`: this machine. */
function isLoopback(address: string): boolean {
  const host = new URL(address).hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Thrown for an answer the command cannot go on from: says what was asked and what came back. */
export function failure(method: string, path: string, reply: ApiReply): CliError {
  const lines = [`${method} ${path}: HTTP ${reply.status}: ${errorOf(reply.body)}`];
  for (const error of errorsOf(reply.body)) lines.push(`  - ${error}`);
  return new CliError(lines.join('\n'));
}

/** The `error` an answer gives (the admin API's `{ "error": "…" }`), or what it holds. */
export function errorOf(body: unknown): string {
  if (isObject(body) && typeof body.error === 'string') return body.error;
  if (typeof body === 'string') return body.slice(0, 500) || '(empty body)';
  return JSON.stringify(body).slice(0, 500);
}

/** The `errors` list a refused config comes with (every problem at once), if any. */
export function errorsOf(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.errors)) return [];
  return body.errors.map(String);
}

/** A path segment: poller names are URL-safe, but a dead letter's key holds ":". */
export const segment = (value: string) => encodeURIComponent(value);

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What failed, and why underneath: Node's fetch says "fetch failed" and keeps the why in `cause`. */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  const code = isObject(cause) && typeof cause.code === 'string' ? cause.code : null;
  const detail = cause instanceof Error ? cause.message : null;
  const why = [code, detail].filter((part) => part !== null && part !== '').join(': ');
  return why === '' || error.message.includes(why) ? error.message : `${error.message} (${why})`;
}
