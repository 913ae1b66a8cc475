import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { webhookId } from '../../src/delivery/standard-webhooks.ts';
import { idempotencyKey } from '../../src/engine/idempotency.ts';

const VERSION = '2026-11-01T00:00:00.000Z';

describe('idempotency keys (R13)', () => {
  it('keeps a plain id readable and in the form it always had: <poller>:<id>:<version>', () => {
    expect(idempotencyKey('seed', 'sess_1', VERSION)).toBe(`seed:sess_1:${VERSION}`);
  });

  it('tells id "b:c" at version "d" from id "b" at version "c:d"', () => {
    expect(idempotencyKey('a', 'b:c', 'd')).toBe('a:b%3Ac:d');
    expect(idempotencyKey('a', 'b', 'c:d')).toBe('a:b:c:d');
  });

  it('gives back its poller, id and version: split at the first two colons, then decoded', () => {
    const part = fc.string({ unit: fc.constantFrom('a', ':', '%', '3', 'A', '2', '5', 'é') });
    const decode = (text: string) => text.replace(/%3A|%25/g, (m) => (m === '%3A' ? ':' : '%'));
    fc.assert(
      fc.property(part, part, (id, version) => {
        const [poller = '', encoded = '', ...rest] = idempotencyKey('p', id, version).split(':');
        return poller === 'p' && decode(encoded) === id && rest.join(':') === version;
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('webhook-id', () => {
  it('is the idempotency key itself when that is short, visible ASCII', async () => {
    const key = idempotencyKey('seed', 'org:42', VERSION);
    expect(await webhookId(key)).toBe(key);
  });

  it('is msg_ and a hash for a key with unicode, control characters or 10 kB, the same every time', async () => {
    for (const id of ['café ☕', 'line\nbreak', 'tab\there', 'x'.repeat(10_000)]) {
      const key = idempotencyKey('seed', id, VERSION);
      const header = await webhookId(key);
      expect(header).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(await webhookId(key)).toBe(header);
    }
    expect(await webhookId('seed:café:1')).not.toBe(await webhookId('seed:cafe:1'));
  });
});
