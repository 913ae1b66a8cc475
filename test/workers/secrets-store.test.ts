import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { SecretDecryptError } from '../../src/secrets/errors.ts';
import { type SecretKeys, secretKeysFrom } from '../../src/secrets/keys.ts';
import { MAX_SECRETS_PER_POLLER } from '../../src/secrets/names.ts';
import { PollerSecrets } from '../../src/secrets/store.ts';

const freshObject = () => env.POLLER.get(env.POLLER.idFromName(`t-${crypto.randomUUID()}`));
const randomKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const T0 = Date.parse('2026-11-20T10:00:00Z');

function keysOf(vars: { SECRETS_KEY?: string; SECRETS_KEY_PREVIOUS?: string }): SecretKeys {
  const result = secretKeysFrom(vars);
  if (!result.ok) throw new Error(result.error.message);
  return result.keys;
}

/** Runs `check` with the PollerSecrets of a fresh Poller object, migrated as in production. */
function withSecrets<T>(
  check: (secrets: PollerSecrets, sql: SqlStorage) => Promise<T> | T,
): Promise<T> {
  return runInDurableObject(freshObject(), (_instance: Poller, state) =>
    check(new PollerSecrets(state.storage.sql), state.storage.sql),
  );
}

/** Fails when any rendering of `thing` (JSON, string, an error's message and stack) holds one of `secrets`. */
function expectNoLeak(thing: unknown, secrets: readonly string[]): void {
  const forms = [JSON.stringify(thing) ?? '', String(thing)];
  if (thing instanceof Error) forms.push(thing.message, thing.stack ?? '');
  for (const form of forms) {
    for (const secret of secrets) expect(form).not.toContain(secret);
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe("a poller's secrets in its Durable Object", () => {
  it('come back from decryptAll as set, and a second put replaces the value', () =>
    withSecrets(async (secrets) => {
      const keys = keysOf({ SECRETS_KEY: randomKey() });
      expect(await secrets.put(keys, 'sessions', 'API_TOKEN', 'first', T0)).toEqual({
        outcome: 'set',
        name: 'API_TOKEN',
        set_at: T0,
        replaced: false,
        origins: [],
      });
      await secrets.put(keys, 'sessions', 'OTHER', 'other-value', T0);
      const again = await secrets.put(keys, 'sessions', 'API_TOKEN', 'second', T0 + 1000);
      expect(again).toMatchObject({ outcome: 'set', replaced: true, set_at: T0 + 1000 });
      expect(await secrets.decryptAll(keys, 'sessions')).toEqual({
        API_TOKEN: 'second',
        OTHER: 'other-value',
      });
    }));

  it('are listed by name and when set, never by value, and stored only as ciphertext', () =>
    withSecrets(async (secrets, sql) => {
      const secretsKey = randomKey();
      const keys = keysOf({ SECRETS_KEY: secretsKey });
      const value = 'sk_live_0123456789abcdef';
      await secrets.put(keys, 'sessions', 'B_TOKEN', value, T0 + 5);
      await secrets.put(keys, 'sessions', 'A_TOKEN', value, T0);
      const listed = secrets.list();
      expect(listed).toEqual([
        { name: 'A_TOKEN', set_at: T0 },
        { name: 'B_TOKEN', set_at: T0 + 5 },
      ]);
      expectNoLeak(listed, [value, secretsKey]);
      const table = sql.exec('SELECT * FROM poller_secrets').toArray();
      expect(table).toHaveLength(2);
      expectNoLeak(table, [value, btoa(value), secretsKey]);
    }));

  it('are removed one at a time, and deleting a name not there says so', () =>
    withSecrets(async (secrets) => {
      const keys = keysOf({ SECRETS_KEY: randomKey() });
      await secrets.put(keys, 'sessions', 'API_TOKEN', 'v', T0);
      await secrets.put(keys, 'sessions', 'KEEP', 'k', T0);
      expect(secrets.delete('API_TOKEN')).toBe(true);
      expect(secrets.delete('API_TOKEN')).toBe(false);
      expect(secrets.delete('not a name')).toBe(false);
      expect(secrets.list().map((row) => row.name)).toEqual(['KEEP']);
      expect(await secrets.decryptAll(keys, 'sessions')).toEqual({ KEEP: 'k' });
    }));

  it('refuse bad names, empty or oversized values and a 101st secret, without echoing the value', () =>
    withSecrets(async (secrets) => {
      const keys = keysOf({ SECRETS_KEY: randomKey() });
      const value = 'hunter2-but-longer';
      const refusals = [
        [await secrets.put(keys, 'p', 'sk-live-abc', value, T0), 400],
        [await secrets.put(keys, 'p', 'SECRETS_KEY', value, T0), 400],
        [await secrets.put(keys, 'p', 'EMPTY', '', T0), 400],
        [await secrets.put(keys, 'p', 'BIG', `${value}${'x'.repeat(8192)}`, T0), 413],
      ] as const;
      for (const [result, status] of refusals) {
        expect(result).toMatchObject({ outcome: 'refused', status });
        expectNoLeak(result, [value, 'sk-live-abc']);
      }
      for (let i = 0; i < MAX_SECRETS_PER_POLLER; i += 1) {
        await secrets.put(keys, 'p', `S${i}`, 'v', T0);
      }
      expect(await secrets.put(keys, 'p', 'ONE_MORE', 'v', T0)).toMatchObject({
        outcome: 'refused',
        status: 409,
      });
      expect(await secrets.put(keys, 'p', 'S0', 'replaced', T0)).toMatchObject({ outcome: 'set' });
      expect(secrets.list()).toHaveLength(MAX_SECRETS_PER_POLLER);
    }));

  it("copied into another poller's storage, do not decrypt there", async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const value = 'copied-secret-value';
    const rows = await withSecrets(async (secrets, sql) => {
      await secrets.put(keys, 'sessions', 'API_TOKEN', value, T0);
      return sql.exec('SELECT * FROM poller_secrets').toArray();
    });
    const error = await withSecrets(async (secrets, sql) => {
      for (const row of rows) {
        sql.exec(
          'INSERT INTO poller_secrets (name, ciphertext, iv, key_id, set_at) VALUES (?, ?, ?, ?, ?)',
          row.name,
          row.ciphertext,
          row.iv,
          row.key_id,
          row.set_at,
        );
      }
      return rejection(secrets.decryptAll(keys, 'billing'));
    });
    expect(error).toBeInstanceOf(SecretDecryptError);
    expect((error as SecretDecryptError).failures.map((f) => f.name)).toEqual(['API_TOKEN']);
    expectNoLeak(error, [value]);
  });

  it('tampered with in storage, fail to decrypt with an error naming the secret and not the value', () =>
    withSecrets(async (secrets, sql) => {
      const secretsKey = randomKey();
      const keys = keysOf({ SECRETS_KEY: secretsKey });
      const value = 'tamper-target-value';
      await secrets.put(keys, 'sessions', 'API_TOKEN', value, T0);
      await secrets.put(keys, 'sessions', 'FINE', 'fine-value', T0);
      const { ciphertext } = sql
        .exec<{ ciphertext: string }>(
          "SELECT ciphertext FROM poller_secrets WHERE name = 'API_TOKEN'",
        )
        .one();
      const bytes = Uint8Array.from(atob(ciphertext), (c) => c.charCodeAt(0));
      bytes[3] = (bytes[3] ?? 0) ^ 0x80;
      sql.exec(
        "UPDATE poller_secrets SET ciphertext = ? WHERE name = 'API_TOKEN'",
        btoa(String.fromCharCode(...bytes)),
      );
      const error = await rejection(secrets.decryptAll(keys, 'sessions'));
      expect(error).toBeInstanceOf(SecretDecryptError);
      expect((error as Error).message).toMatch(/^secret API_TOKEN \(key [0-9a-f]{8}\) does not/);
      expectNoLeak(error, [value, 'fine-value', secretsKey]);
    }));
});

describe('rotating SECRETS_KEY', () => {
  it('reads old secrets through SECRETS_KEY_PREVIOUS, moves them to the new key, then needs only the new key', () =>
    withSecrets(async (secrets, sql) => {
      const oldKey = randomKey();
      const newKey = randomKey();
      const before = keysOf({ SECRETS_KEY: oldKey });
      await secrets.put(before, 'sessions', 'API_TOKEN', 'token-value', T0);
      await secrets.put(before, 'sessions', 'PASSWORD', 'password-value', T0);

      const after = keysOf({ SECRETS_KEY: newKey });
      const lost = await rejection(secrets.decryptAll(after, 'sessions'));
      expect((lost as Error).message).toContain('set SECRETS_KEY_PREVIOUS to the old key');

      const during = keysOf({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
      const expected = { API_TOKEN: 'token-value', PASSWORD: 'password-value' };
      expect(await secrets.decryptAll(during, 'sessions')).toEqual(expected);
      expect(await secrets.reencrypt(during, 'sessions')).toBe(2);
      expect(await secrets.reencrypt(during, 'sessions')).toBe(0);
      const ids = sql.exec<{ key_id: string }>('SELECT DISTINCT key_id FROM poller_secrets');
      expect(ids.toArray()).toEqual([{ key_id: await after.current.id() }]);
      expect(secrets.list()).toEqual([
        { name: 'API_TOKEN', set_at: T0 },
        { name: 'PASSWORD', set_at: T0 },
      ]);
      expect(await secrets.decryptAll(after, 'sessions')).toEqual(expected);
    }));

  it('keeps a value set while the rotation runs, instead of writing back the old one', () =>
    withSecrets(async (secrets) => {
      const oldKey = randomKey();
      const newKey = randomKey();
      await secrets.put(keysOf({ SECRETS_KEY: oldKey }), 'p', 'API_TOKEN', 'old-value', T0);
      const during = keysOf({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
      const [moved] = await Promise.all([
        secrets.reencrypt(during, 'p'),
        secrets.put(during, 'p', 'API_TOKEN', 'new-value', T0 + 1),
      ]);
      expect(moved).toBe(0);
      expect(await secrets.decryptAll(keysOf({ SECRETS_KEY: newKey }), 'p')).toEqual({
        API_TOKEN: 'new-value',
      });
    }));

  it('moves what it can and names what no key opens, without a value in the error', () =>
    withSecrets(async (secrets) => {
      const lostKey = randomKey();
      const oldKey = randomKey();
      const newKey = randomKey();
      await secrets.put(keysOf({ SECRETS_KEY: lostKey }), 'p', 'LOST', 'lost-value', T0);
      await secrets.put(keysOf({ SECRETS_KEY: oldKey }), 'p', 'KEPT', 'kept-value', T0);
      const during = keysOf({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
      const error = await rejection(secrets.reencrypt(during, 'p'));
      expect(error).toBeInstanceOf(SecretDecryptError);
      expect((error as SecretDecryptError).failures).toMatchObject([
        { name: 'LOST', reason: 'unknown_key' },
      ]);
      expectNoLeak(error, ['lost-value', 'kept-value', lostKey, oldKey, newKey]);
      secrets.delete('LOST');
      expect(await secrets.decryptAll(keysOf({ SECRETS_KEY: newKey }), 'p')).toEqual({
        KEPT: 'kept-value',
      });
    }));
});
