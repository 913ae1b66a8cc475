import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/schema.ts';
import { createDeliverer } from '../../src/delivery/index.ts';
import type { DeliveryItem } from '../../src/engine/ports.ts';
import { HttpSource } from '../../src/sources/http-source.ts';

const SECRET = `whsec_${btoa('k'.repeat(24))}`;
const FROM = Date.parse('2026-03-01T10:00:00Z');
const window = { from: FROM, to: FROM + 60_000, bounded: true, startedAt: FROM, cut: false };

function poller() {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: {
        url: 'https://acme.example.com/v1/items',
        from_param: 'since',
        params: { key: '${TOKEN}' },
      },
      deliver: { type: 'webhook', url: 'https://hooks.example.net/in', secret: SECRET },
    },
    { TOKEN: 'sekrit-token' },
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry;
}

/** A source whose every request throws `thrown`, as workerd's fetch does when no answer comes. */
function unreachable(thrown: Error): HttpSource {
  const entry = poller();
  return new HttpSource(
    entry.config.source as SourceConfig,
    async () => {
      throw thrown;
    },
    entry.secrets,
    () => FROM,
  );
}

// What workerd's fetch throws, as seen from a workerd test: `http://nonexistent.invalid/`
// (its log says "failed to lookup address information") and `http://127.0.0.1:1/`.
const WORKERD_DNS = 'internal error; reference = ler627qb5a1282cm4067r22g';
const WORKERD_REFUSED = 'Network connection lost.';

describe('an upstream that cannot be reached', () => {
  it.each([
    [WORKERD_DNS, 'DNS lookup failed for acme.example.com'],
    ['getaddrinfo ENOTFOUND acme.example.com', 'DNS lookup failed for acme.example.com'],
    [WORKERD_REFUSED, 'connection refused (or lost) by acme.example.com'],
    ['connect ECONNREFUSED 10.0.0.1:443', 'connection refused (or lost) by acme.example.com'],
    ['connect ETIMEDOUT 10.0.0.1:443', 'connection timed out: acme.example.com did not answer'],
  ])('"%s" fails the page as transient, naming the host: %s', async (thrown, said) => {
    const page = await unreachable(new Error(thrown)).fetchPage(window, null);
    expect(page).toMatchObject({ ok: false, kind: 'transient' });
    const error = page.ok ? '' : page.error;
    expect(error).toContain(said);
    // What the runtime said stays after it, for the record, and the request without secrets.
    expect(error).toContain(JSON.stringify(thrown));
    expect(error).toContain('key=***');
    expect(error).not.toContain('sekrit-token');
  });

  it('an upstream that does not answer in time is named, with source.timeout', async () => {
    const timeout = Object.assign(new Error('The operation was aborted due to timeout'), {
      name: 'TimeoutError',
    });
    const page = await unreachable(timeout).fetchPage(window, null);
    expect(page.ok ? '' : page.error).toContain(
      'timed out: acme.example.com did not answer within source.timeout (30000 ms)',
    );
  });

  it('a failure it does not know is shown as it was thrown', async () => {
    const page = await unreachable(new TypeError('something odd')).fetchPage(window, null);
    expect(page.ok ? '' : page.error).toMatch(/: TypeError: something odd$/);
  });

  it('a webhook receiver that cannot be reached is named in the retry', async () => {
    const entry = poller();
    const delivery = createDeliverer(
      'p',
      entry.config.deliver,
      {} as Env,
      async () => {
        throw new Error(WORKERD_REFUSED);
      },
      entry.secrets,
      () => FROM,
    );
    if (!delivery.ok) throw new Error(delivery.error);
    const version = '2026-03-01T10:00:00.000Z';
    const item: DeliveryItem = {
      update: { id: 'a', version, versionMs: Date.parse(version), record: { id: 'a' } },
      op: 'upsert',
      idempotencyKey: 'p:a:1',
      attempt: 1,
    };
    const result = await delivery.deliverer.deliver([item]);
    expect(result).toMatchObject({ kind: 'retry' });
    expect(result.kind === 'retry' && result.error).toContain(
      'connection refused (or lost) by hooks.example.net',
    );
  });
});
