import type { HttpFetch } from '../sources/http-source.ts';

/** One request a preview made, as its answer shows it: secrets redacted. */
export interface PreviewRequest {
  method: string;
  url: string;
  /** The request's body (a token endpoint's form, a POST source's JSON); absent when none. */
  body?: string;
  /** Null when no answer came (a network error, a timeout, a refusal before it was sent). */
  status: number | null;
  /** From the request to the end of its answer's body (or to its headers, if unread). */
  ms: number;
  /** Bytes of the answer's body that were read. */
  bytes: number;
  /** Why no answer came. */
  error?: string;
}

/** A request as it was sent, kept until the preview answers (and redacts it). */
interface Logged {
  method: string;
  url: string;
  body: string | null;
  status: number | null;
  sentAt: number;
  doneAt: number;
  bytes: number;
  error: string | null;
}

/**
 * Every request a preview's source sends, recorded by wrapping the fetch it is given (the
 * wiring's `tap`): method, URL, body, status, time and bytes. The body of the last answer is
 * kept (up to `keep` bytes: the source's max_body, which no good page passes), so
 * the preview can read what the page said beside its records: `more`, `stop`, `errors`.
 * Nothing is redacted here: the tokens an authorizer learns are known only at the end.
 */
export class RequestLog {
  private readonly logged: Logged[] = [];
  private lastBody: { chunks: Uint8Array[]; bytes: number; whole: boolean } | null = null;

  /** The most of an answer's body kept: the source's max_body, once the config is known. */
  keep = 16 * 1024 * 1024;

  constructor(private readonly now: () => number) {}

  /** Wraps a fetch so that each request it sends is recorded. */
  readonly tap = (fetch: HttpFetch): HttpFetch => {
    return async (request) => {
      const body = request.body === null ? null : await request.clone().text();
      const entry: Logged = {
        method: request.method,
        url: request.url,
        body,
        status: null,
        sentAt: this.now(),
        doneAt: this.now(),
        bytes: 0,
        error: null,
      };
      this.logged.push(entry);
      let response: Response;
      try {
        response = await fetch(request);
      } catch (error) {
        entry.doneAt = this.now();
        entry.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        throw error;
      }
      entry.status = response.status;
      entry.doneAt = this.now();
      return this.counted(response, entry);
    };
  };

  /** How many requests were sent so far. */
  get count(): number {
    return this.logged.length;
  }

  /** The text of the last answer's body, if it was read whole; undefined otherwise. */
  lastText(): string | undefined {
    const last = this.lastBody;
    if (last === null || !last.whole) return undefined;
    const joined = new Uint8Array(last.bytes);
    let at = 0;
    for (const chunk of last.chunks) {
      joined.set(chunk, at);
      at += chunk.byteLength;
    }
    return new TextDecoder().decode(joined);
  }

  /** The requests, each shown through `redact`. */
  shown(redact: (text: string) => string): PreviewRequest[] {
    return this.logged.map((entry) => ({
      method: entry.method,
      url: redact(entry.url),
      ...(entry.body === null ? {} : { body: redact(entry.body) }),
      status: entry.status,
      ms: Math.max(0, entry.doneAt - entry.sentAt),
      bytes: entry.bytes,
      ...(entry.error === null ? {} : { error: redact(entry.error) }),
    }));
  }

  /** The answer, its body counted (and kept, up to `keep` bytes) as the source reads it. */
  private counted(response: Response, entry: Logged): Response {
    if (response.body === null) {
      this.lastBody = { chunks: [], bytes: 0, whole: true };
      return response;
    }
    const kept = { chunks: [] as Uint8Array[], bytes: 0, whole: false };
    this.lastBody = kept;
    const keep = this.keep;
    const now = this.now;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        entry.bytes += chunk.byteLength;
        if (entry.bytes <= keep) {
          kept.chunks.push(chunk);
          kept.bytes += chunk.byteLength;
        } else kept.chunks = [];
        entry.doneAt = now();
        controller.enqueue(chunk);
      },
      flush() {
        kept.whole = entry.bytes <= keep;
        entry.doneAt = now();
      },
    });
    return new Response(response.body.pipeThrough(counter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}
