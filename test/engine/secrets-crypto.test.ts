import { describe, expect, it } from 'vitest';
import { DEFAULT_FLEET_POLICY } from '../../src/config/fleet-policy.ts';
import { runtimeScope } from '../../src/config/runtime-poller.ts';
import {
  decryptSecret,
  deriveKey,
  encryptSecret,
  type SealedSecret,
  SecretsKey,
} from '../../src/secrets/crypto.ts';
import { SecretDecryptError, SecretsKeyError } from '../../src/secrets/errors.ts';
import { type SecretKeys, secretKeysFrom } from '../../src/secrets/keys.ts';
import { secretNameProblem, secretValueProblem } from '../../src/secrets/names.ts';

/** What `openssl rand -base64 32` gives: 44 characters. */
const randomKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const VALUE = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';

function keysOf(env: { SECRETS_KEY?: string; SECRETS_KEY_PREVIOUS?: string }): SecretKeys {
  const result = secretKeysFrom(env);
  if (!result.ok) throw new Error(result.error.message);
  return result.keys;
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

describe('a secret sealed for one poller', () => {
  it('opens again for that poller, name and key', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const sealed = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    expect(await decryptSecret(keys, 'sessions', 'API_TOKEN', sealed)).toBe(VALUE);
  });

  it('keeps every character of a unicode value', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const value = 'pässwörd 🔑 with "quotes" and \n newlines';
    const sealed = await encryptSecret(keys, 'sessions', 'P', value);
    expect(await decryptSecret(keys, 'sessions', 'P', sealed)).toBe(value);
  });

  it('never repeats an IV, so the same value seals to different ciphertexts', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const a = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    const b = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(atob(a.iv)).toHaveLength(12);
    expect(a.key_id).toBe(b.key_id);
    expect(a.key_id).toMatch(/^[0-9a-f]{8}$/);
  });

  it('holds neither the value nor the key in what is stored', async () => {
    const secretsKey = randomKey();
    const keys = keysOf({ SECRETS_KEY: secretsKey });
    const sealed = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    expectNoLeak(sealed, [VALUE, secretsKey, btoa(VALUE)]);
  });

  it('does not open when copied to another poller, even under the same SECRETS_KEY', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const sealed = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    const error = await rejection(decryptSecret(keys, 'billing', 'API_TOKEN', sealed));
    expect(error).toBeInstanceOf(SecretDecryptError);
    expect((error as SecretDecryptError).failures).toEqual([
      { name: 'API_TOKEN', key_id: sealed.key_id, reason: 'rejected' },
    ]);
  });

  it('does not open when moved to another name (the name is authenticated)', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const sealed = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    await expect(decryptSecret(keys, 'sessions', 'OTHER_TOKEN', sealed)).rejects.toBeInstanceOf(
      SecretDecryptError,
    );
  });

  it('does not open once any byte of the ciphertext, its tag or the IV is altered', async () => {
    const keys = keysOf({ SECRETS_KEY: randomKey() });
    const sealed = await encryptSecret(keys, 'sessions', 'API_TOKEN', VALUE);
    const flip = (base64: string, at: number) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      bytes[at] = (bytes[at] ?? 0) ^ 1;
      return btoa(String.fromCharCode(...bytes));
    };
    const length = atob(sealed.ciphertext).length;
    const altered: SealedSecret[] = [
      { ...sealed, ciphertext: flip(sealed.ciphertext, 0) },
      { ...sealed, ciphertext: flip(sealed.ciphertext, length - 1) },
      { ...sealed, ciphertext: btoa(atob(sealed.ciphertext).slice(0, -16)) },
      { ...sealed, iv: flip(sealed.iv, 5) },
      { ...sealed, iv: 'not base64!' },
    ];
    for (const stored of altered) {
      const error = await rejection(decryptSecret(keys, 'sessions', 'API_TOKEN', stored));
      expect(error).toBeInstanceOf(SecretDecryptError);
      expect((error as Error).message).toContain('API_TOKEN');
      expect((error as Error).message).toContain('altered');
    }
  });

  it('does not open under another SECRETS_KEY, and says which key it needs', async () => {
    const sealed = await encryptSecret(keysOf({ SECRETS_KEY: randomKey() }), 's', 'T', VALUE);
    const other = randomKey();
    const error = await rejection(decryptSecret(keysOf({ SECRETS_KEY: other }), 's', 'T', sealed));
    expect(error).toBeInstanceOf(SecretDecryptError);
    expect((error as Error).message).toContain(`encrypted under key ${sealed.key_id}`);
    expect((error as Error).message).toContain('SECRETS_KEY_PREVIOUS');
    expectNoLeak(error, [VALUE, other]);
  });
});

describe('rotating SECRETS_KEY', () => {
  it('opens secrets of the old key while SECRETS_KEY_PREVIOUS holds it, and seals under the new one', async () => {
    const oldKey = randomKey();
    const newKey = randomKey();
    const before = keysOf({ SECRETS_KEY: oldKey });
    const sealed = await encryptSecret(before, 'sessions', 'API_TOKEN', VALUE);
    const during = keysOf({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
    expect(await decryptSecret(during, 'sessions', 'API_TOKEN', sealed)).toBe(VALUE);
    const resealed = await encryptSecret(during, 'sessions', 'API_TOKEN', VALUE);
    expect(resealed.key_id).toBe(await during.current.id());
    expect(resealed.key_id).not.toBe(sealed.key_id);
    const after = keysOf({ SECRETS_KEY: newKey });
    expect(await decryptSecret(after, 'sessions', 'API_TOKEN', resealed)).toBe(VALUE);
    await expect(decryptSecret(after, 'sessions', 'API_TOKEN', sealed)).rejects.toThrow(
      /not configured/,
    );
  });

  it('ignores a SECRETS_KEY_PREVIOUS equal to SECRETS_KEY', () => {
    const key = randomKey();
    expect(keysOf({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: `${key}\n` }).previous).toBeUndefined();
    expect(keysOf({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: '' }).previous).toBeUndefined();
  });
});

describe('SECRETS_KEY', () => {
  it('gives each key one fingerprint, whatever the poller, and the same after trimming', async () => {
    const key = randomKey();
    const id = await new SecretsKey(key).id();
    expect(await new SecretsKey(`  ${key}\n`).id()).toBe(id);
    expect(await new SecretsKey(randomKey()).id()).not.toBe(id);
  });

  it('derives a different AES-GCM-256 key per poller, which cannot be exported', async () => {
    const key = randomKey();
    const a = await deriveKey(key, 'sessions');
    expect(a.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect(a.extractable).toBe(false);
    const iv = new Uint8Array(12);
    const plain = new TextEncoder().encode('x');
    const seal = async (k: CryptoKey) =>
      btoa(
        String.fromCharCode(
          ...new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, k, plain)),
        ),
      );
    expect(await seal(a)).toBe(await seal(await deriveKey(key, 'sessions')));
    expect(await seal(a)).not.toBe(await seal(await deriveKey(key, 'billing')));
  });

  const refused: [string, { SECRETS_KEY?: string; SECRETS_KEY_PREVIOUS?: string }, string][] = [
    ['missing', {}, 'SECRETS_KEY is not set'],
    ['empty', { SECRETS_KEY: '' }, 'SECRETS_KEY is not set'],
    ['whitespace', { SECRETS_KEY: ' \n' }, 'SECRETS_KEY is not set'],
    ['31 characters', { SECRETS_KEY: 'abcdefghijklmnopqrstuvwxyz01234' }, 'shorter than 32'],
    ['one character repeated', { SECRETS_KEY: 'a'.repeat(64) }, 'not random'],
    [
      'a weak previous key',
      { SECRETS_KEY: 'Zq8mW1xR4tY7uI0oP3aS6dF9gH2jK5lC', SECRETS_KEY_PREVIOUS: 'short-old-key' },
      'SECRETS_KEY_PREVIOUS is shorter than 32',
    ],
  ];
  for (const [what, env, message] of refused) {
    it(`is refused when ${what}, with an error that names the variable and not the key`, () => {
      const result = secretKeysFrom(env);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toBeInstanceOf(SecretsKeyError);
      expect(result.error.message).toContain(message);
      expect(result.error.message).toContain('openssl rand -base64 32');
      const given = [env.SECRETS_KEY, env.SECRETS_KEY_PREVIOUS].filter(
        (value): value is string => value !== undefined && value.trim().length > 3,
      );
      expectNoLeak(result, given);
      expectNoLeak(result.error, given);
    });
  }

  it('is accepted at 32 characters, and rejected by deriveKey below that', async () => {
    expect(secretKeysFrom({ SECRETS_KEY: 'Zq8mW1xR4tY7uI0oP3aS6dF9gH2jK5lC' }).ok).toBe(true);
    await expect(deriveKey('too-short', 'sessions')).rejects.toBeInstanceOf(SecretsKeyError);
  });

  it('shows only its variable when the keys are logged or serialized', () => {
    const current = randomKey();
    const previous = randomKey();
    const keys = keysOf({ SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: previous });
    expect(JSON.parse(JSON.stringify(keys))).toEqual({
      current: { variable: 'SECRETS_KEY' },
      previous: { variable: 'SECRETS_KEY_PREVIOUS' },
    });
    expect(`${keys.current}`).toBe('[SECRETS_KEY]');
    expectNoLeak(keys, [current, previous]);
    expectNoLeak(Object.entries(keys.current), [current]);
  });
});

describe('secret names and values', () => {
  it('follow the ${NAME} rule, and never echo a refused name', () => {
    for (const name of ['API_TOKEN', '_x', 'a1']) expect(secretNameProblem(name)).toBeUndefined();
    for (const name of ['', '1ABC', 'has-dash', 'has space', 'sk.live.abc', 'A'.repeat(129)]) {
      const problem = secretNameProblem(name);
      expect(problem).toContain('letters, digits and _');
      if (name !== '') expect(problem).not.toContain(name);
    }
  });

  it("keep the Worker's own settings for the Worker", () => {
    for (const name of ['POLLERS', 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS', 'ADMIN_TOKEN']) {
      expect(secretNameProblem(name)).toContain("the Worker's own setting");
    }
  });

  it('are non-empty and at most 8 KB of UTF-8', () => {
    expect(secretValueProblem('')).toBe('empty');
    expect(secretValueProblem('x'.repeat(8192))).toBeUndefined();
    expect(secretValueProblem('x'.repeat(8193))).toBe('too_large');
    expect(secretValueProblem('é'.repeat(4097))).toBe('too_large');
  });
});

describe("a runtime poller's ${NAME} scope", () => {
  it("takes the poller's own secret first, then only the Worker secrets FLEET_POLICY lists", () => {
    const env = { API_TOKEN: 'worker', OTHER: 'worker-other', POLLERS: '{}' };
    const scope = runtimeScope(
      env,
      { API_TOKEN: 'poller' },
      { ...DEFAULT_FLEET_POLICY, env: ['OTHER'] },
    );
    expect(scope.API_TOKEN).toBe('poller');
    expect(scope.OTHER).toBe('worker-other');
    expect(scope.POLLERS).toBeUndefined();
    expect(env.API_TOKEN).toBe('worker');
  });

  it('keeps a secret called __proto__ as a value, not a prototype', () => {
    const own = Object.fromEntries([['__proto__', 'value']]);
    const scope = runtimeScope({}, own, DEFAULT_FLEET_POLICY);
    expect(Object.getOwnPropertyDescriptor(scope, '__proto__')?.value).toBe('value');
    expect(Object.getPrototypeOf(scope)).toBe(Object.prototype);
  });
});
