import { vi } from 'vitest';

/** A deferred promise, to hold a request open until the test lets it go. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

interface StoredUpdate {
  id: string;
  updatedAt: string;
  updatedAtMs: number;
  /** Not returned before this time (replication lag). */
  visibleAt: number;
  /** More fields of the record (a tombstone's status, say). */
  fields: Record<string, unknown>;
}

interface Hold {
  arrived: boolean;
  released: boolean;
}

type Scripted = (request: Request) => Response | Promise<Response>;

/**
 * A seed-shaped upstream (`date_from`, optional `date_to`, `cursor`, a `sessions` array),
 * answering from memory: `>=` at from, `<` at to, oldest first, `per_page` at a time.
 */
export class FakeUpstream {
  readonly updates: StoredUpdate[] = [];
  readonly requests: URL[] = [];
  private readonly scripted: Scripted[] = [];
  private holds: Hold[] = [];
  /** Called at the start of each request, before it is answered. */
  onRequest?: (url: URL) => void;
  /** Answers each page this long after it was asked for (a real API's latency). */
  delayMs = 0;
  /**
   * How the upstream reads `date_from`: as sent by default; an upstream that truncates it
   * (to the minute, say) answers with records stamped below the window.
   */
  readFrom: (from: number) => number = (from) => from;

  add(
    id: string,
    at: number | string,
    options: { visibleAt?: number; fields?: Record<string, unknown> } = {},
  ): StoredUpdate {
    const updatedAtMs = typeof at === 'number' ? at : Date.parse(at);
    const update = {
      id,
      updatedAt: typeof at === 'string' ? at : new Date(at).toISOString(),
      updatedAtMs,
      visibleAt: options.visibleAt ?? Number.NEGATIVE_INFINITY,
      fields: options.fields ?? {},
    };
    this.updates.push(update);
    return update;
  }

  /** The next request gets this response instead of data. */
  respondOnce(response: Scripted): void {
    this.scripted.push(response);
  }

  /**
   * Holds the next request open until `release()`. The two sides only share flags: a promise
   * settled by the Durable Object would resume the test inside the object's I/O context.
   */
  holdNext() {
    const hold: Hold = { arrived: false, released: false };
    this.holds.push(hold);
    return {
      arrived: () => vi.waitUntil(() => hold.arrived, { timeout: 2_000, interval: 1 }),
      release: () => {
        hold.released = true;
      },
    };
  }

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(url);
    this.onRequest?.(url);
    const hold = this.holds.shift();
    if (hold) {
      hold.arrived = true;
      while (!hold.released) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const scripted = this.scripted.shift();
    if (scripted) return scripted(request);
    const from = this.readFrom(Date.parse(url.searchParams.get('date_from') ?? ''));
    const toParam = url.searchParams.get('date_to');
    const to = toParam === null ? Number.POSITIVE_INFINITY : Date.parse(toParam);
    const perPage = Number(url.searchParams.get('per_page') ?? 100);
    const offset = Number(url.searchParams.get('cursor') ?? 0);
    const now = Date.now();
    const matching = this.updates
      .filter((u) => u.updatedAtMs >= from && u.updatedAtMs < to && u.visibleAt <= now)
      .sort((a, b) => a.updatedAtMs - b.updatedAtMs || a.id.localeCompare(b.id));
    const page = matching.slice(offset, offset + perPage);
    const more = offset + perPage < matching.length;
    return Response.json({
      sessions: page.map((u) => ({
        id: u.id,
        updated_at: u.updatedAt,
        status: 'active',
        ...u.fields,
      })),
      next_cursor: more ? String(offset + perPage) : null,
    });
  }

  /** Every `date_from` the upstream was asked for, in order. */
  froms(): string[] {
    return this.requests.map((url) => url.searchParams.get('date_from') ?? '');
  }
}

export interface Delivery {
  id: string;
  version: string;
  /** The envelope's `op` and Standard Webhooks event `type`. */
  op: string;
  type: string;
  key: string;
  body: string;
  headers: Headers;
}

/** A webhook receiver that records deliveries and fails the ones it is told to. */
export class FakeReceiver {
  readonly deliveries: Delivery[] = [];
  /** Requests received (a batch is one request), with their headers and parsed body. */
  readonly requests: { headers: Headers; body: string; size: number }[] = [];
  private readonly failures = new Map<string, { status: number; times: number }>();
  /** Fails each request with this probability (a 503), from a seeded random source. */
  flaky?: { rate: number; random: () => number };
  /** Keeps each request open a moment, so concurrent ones overlap. */
  delayMs = 0;
  maxInFlight = 0;
  /** Ids that had two versions in flight at once (must stay empty). */
  readonly overlaps: string[] = [];
  private inFlight = 0;
  private readonly inFlightIds = new Set<string>();

  private holds: { at: number; hold: Hold }[] = [];
  private received = 0;

  /** Answers `status` to the next `times` deliveries of record `id`. */
  fail(id: string, status: number, times = 1): void {
    this.failures.set(id, { status, times });
  }

  /** Holds the n-th request from now open until `release()` (flags only, as for the upstream). */
  holdNth(n: number) {
    const hold: Hold = { arrived: false, released: false };
    this.holds.push({ at: this.received + n, hold });
    return {
      arrived: () => vi.waitUntil(() => hold.arrived, { timeout: 2_000, interval: 1 }),
      release: () => {
        hold.released = true;
      },
    };
  }

  async handle(request: Request): Promise<Response> {
    this.received += 1;
    const held = this.holds.find((entry) => entry.at === this.received);
    if (held) {
      held.hold.arrived = true;
      while (!held.hold.released) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const body = await request.text();
    const parsed = JSON.parse(body) as Envelope | Envelope[];
    const envelopes = Array.isArray(parsed) ? parsed : [parsed];
    this.requests.push({ headers: request.headers, body, size: envelopes.length });
    for (const envelope of envelopes) {
      if (this.inFlightIds.has(envelope.id)) this.overlaps.push(envelope.id);
      this.inFlightIds.add(envelope.id);
    }
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      for (const envelope of envelopes) {
        const failure = this.failures.get(envelope.id);
        if (failure && failure.times > 0) {
          failure.times -= 1;
          return new Response('receiver says no', { status: failure.status });
        }
      }
      if (this.flaky && this.flaky.random() < this.flaky.rate) {
        return new Response('flaky receiver', { status: 503 });
      }
      for (const envelope of envelopes) {
        this.deliveries.push({
          id: envelope.id,
          version: envelope.version,
          op: envelope.op,
          type: envelope.type,
          key: Array.isArray(parsed)
            ? envelope.idempotency_key
            : (request.headers.get('webhook-id') ?? ''),
          body,
          headers: request.headers,
        });
      }
      return new Response(null, { status: 204 });
    } finally {
      this.inFlight -= 1;
      for (const envelope of envelopes) this.inFlightIds.delete(envelope.id);
    }
  }

  ids(): string[] {
    return this.deliveries.map((d) => d.id);
  }
}

interface Envelope {
  id: string;
  version: string;
  op: string;
  type: string;
  idempotency_key: string;
}

/** Anything that answers requests for one host. */
export interface FakeHost {
  handle(request: Request): Promise<Response>;
}

/** Routes the Worker's outbound fetch (same isolate as the test) to the fakes, by host. */
export function installFakes(hosts: Record<string, FakeHost> = {}) {
  const upstream = new FakeUpstream();
  const receiver = new FakeReceiver();
  const routes: Record<string, FakeHost> = {
    'upstream.test': upstream,
    'receiver.test': receiver,
    ...hosts,
  };
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const host = routes[new URL(request.url).host];
    if (!host) throw new Error(`test fetch: no fake for ${request.url}`);
    return host.handle(request);
  });
  return { upstream, receiver };
}
