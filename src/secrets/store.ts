import { decryptSecret, encryptSecret, fingerprints, type SecretKeys } from './crypto.ts';
import { type DecryptFailure, SecretDecryptError } from './errors.ts';
import {
  MAX_SECRET_VALUE_BYTES,
  MAX_SECRETS_PER_POLLER,
  secretNameProblem,
  secretValueProblem,
} from './names.ts';

/** A secret as listed: its name and when it was set (ms), never its value. */
export interface SecretListing {
  name: string;
  set_at: number;
}

/**
 * The origins a secret may be sent to (R18), by name: null for one set before secrets were
 * bound, until the poller's next wiring binds it.
 */
export type SecretOrigins = Readonly<Record<string, readonly string[] | null>>;

export type PutSecretResult =
  | { outcome: 'set'; name: string; set_at: number; replaced: boolean; origins: string[] }
  | { outcome: 'refused'; status: 400 | 409 | 413; error: string };

type Row = { name: string; ciphertext: string; iv: string; key_id: string };

/**
 * One poller's secrets in its Durable Object's SQLite (table `poller_secrets`, migration 10),
 * each sealed under SECRETS_KEY (crypto.ts). Write-only from outside: `list` shows names.
 */
export class PollerSecrets {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Sets (or replaces) secret `name`, bound to `origins`: the only ones it may be sent to
   * (none unless told). Refusals name the rule, never the value.
   */
  async put(
    keys: SecretKeys,
    poller: string,
    name: string,
    value: string,
    now: number,
    origins: readonly string[] = [],
  ): Promise<PutSecretResult> {
    const badName = secretNameProblem(name);
    if (badName !== undefined) return { outcome: 'refused', status: 400, error: badName };
    const badValue = secretValueProblem(value);
    if (badValue === 'empty') {
      return { outcome: 'refused', status: 400, error: `secret ${name}: the value is empty` };
    }
    if (badValue === 'too_large') {
      return {
        outcome: 'refused',
        status: 413,
        error: `secret ${name}: the value is larger than ${MAX_SECRET_VALUE_BYTES} bytes`,
      };
    }
    const sealed = await encryptSecret(keys, poller, name, value);
    // From here to the write nothing awaits: the cap holds against concurrent puts.
    const replaced = this.has(name);
    if (!replaced && this.count() >= MAX_SECRETS_PER_POLLER) {
      return {
        outcome: 'refused',
        status: 409,
        error: `a poller holds at most ${MAX_SECRETS_PER_POLLER} secrets: delete one first`,
      };
    }
    const bound = [...new Set(origins)].sort();
    this.sql.exec(
      `INSERT INTO poller_secrets (name, ciphertext, iv, key_id, set_at, origins)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET ciphertext = excluded.ciphertext, iv = excluded.iv,
         key_id = excluded.key_id, set_at = excluded.set_at, origins = excluded.origins`,
      name,
      sealed.ciphertext,
      sealed.iv,
      sealed.key_id,
      now,
      JSON.stringify(bound),
    );
    return { outcome: 'set', name, set_at: now, replaced, origins: bound };
  }

  /** Each secret's origins, by name (null: set before secrets were bound). */
  origins(): SecretOrigins {
    const rows = this.sql
      .exec<{ name: string; origins: string | null }>('SELECT name, origins FROM poller_secrets')
      .toArray();
    // Entries, not assignment: a secret may be called __proto__.
    return Object.fromEntries(rows.map((row) => [row.name, parseOrigins(row.origins)]));
  }

  /**
   * Binds a secret set before secrets were bound to `origins` (migration 20); one bound
   * meanwhile (set again) keeps its own. True when it was bound here.
   */
  bindUnbound(name: string, origins: readonly string[]): boolean {
    const bound = JSON.stringify([...new Set(origins)].sort());
    return (
      this.sql.exec(
        'UPDATE poller_secrets SET origins = ? WHERE name = ? AND origins IS NULL',
        bound,
        name,
      ).rowsWritten > 0
    );
  }

  /** Every secret's name and when it was set, by name. */
  list(): SecretListing[] {
    return this.sql
      .exec<{ name: string; set_at: number }>(
        'SELECT name, set_at FROM poller_secrets ORDER BY name',
      )
      .toArray()
      .map(({ name, set_at }) => ({ name, set_at }));
  }

  /** Every secret's name, when it was set, the fingerprint of its key, and its origins. */
  listSealed(): (SecretListing & { key_id: string; origins: string[] | null })[] {
    return this.sql
      .exec<{ name: string; set_at: number; key_id: string; origins: string | null }>(
        'SELECT name, set_at, key_id, origins FROM poller_secrets ORDER BY name',
      )
      .toArray()
      .map(({ name, set_at, key_id, origins }) => ({
        name,
        set_at,
        key_id,
        origins: parseOrigins(origins),
      }));
  }

  /** Removes secret `name`; false when there was none. */
  delete(name: string): boolean {
    return this.sql.exec('DELETE FROM poller_secrets WHERE name = ?', name).rowsWritten > 0;
  }

  /** Every secret's value by name, for `${NAME}`. Throws SecretDecryptError naming each that fails. */
  async decryptAll(keys: SecretKeys, poller: string): Promise<Record<string, string>> {
    // Entries, not assignment: a secret may be called __proto__.
    const values: [string, string][] = [];
    const failures: DecryptFailure[] = [];
    for (const row of this.rows('SELECT name, ciphertext, iv, key_id FROM poller_secrets')) {
      const value = await open(keys, poller, row, failures);
      if (value !== undefined) values.push([row.name, value]);
    }
    if (failures.length > 0) throw new SecretDecryptError(failures, await fingerprints(keys));
    return Object.fromEntries(values);
  }

  /**
   * Rotation: seals every secret not under the current key again under it, and answers how
   * many moved. A secret set meanwhile is left as set (the write is conditional on the row
   * being unchanged). Secrets that decrypt under no key stay as they are and are named in a
   * SecretDecryptError, thrown after the others have moved.
   */
  async reencrypt(keys: SecretKeys, poller: string): Promise<number> {
    const current = await keys.current.id();
    const failures: DecryptFailure[] = [];
    let moved = 0;
    const stale = this.rows(
      'SELECT name, ciphertext, iv, key_id FROM poller_secrets WHERE key_id <> ? ORDER BY name',
      current,
    );
    for (const row of stale) {
      const value = await open(keys, poller, row, failures);
      if (value === undefined) continue;
      const sealed = await encryptSecret(keys, poller, row.name, value);
      const cursor = this.sql.exec(
        `UPDATE poller_secrets SET ciphertext = ?, iv = ?, key_id = ?
          WHERE name = ? AND ciphertext = ? AND iv = ?`,
        sealed.ciphertext,
        sealed.iv,
        sealed.key_id,
        row.name,
        row.ciphertext,
        row.iv,
      );
      if (cursor.rowsWritten > 0) moved += 1;
    }
    if (failures.length > 0) throw new SecretDecryptError(failures, await fingerprints(keys));
    return moved;
  }

  private rows(query: string, ...bindings: SqlStorageValue[]): Row[] {
    return this.sql.exec<Row>(query, ...bindings).toArray();
  }

  private has(name: string): boolean {
    return this.sql.exec('SELECT 1 FROM poller_secrets WHERE name = ?', name).toArray().length > 0;
  }

  private count(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM poller_secrets').one().n;
  }
}

/** A row's origins as stored: a JSON array of strings, or null (not bound yet). */
function parseOrigins(text: string | null): string[] | null {
  if (text === null) return null;
  const parsed: unknown = JSON.parse(text);
  // Anything else was never written here: bound to nowhere, never to everywhere.
  return Array.isArray(parsed) ? parsed.filter((item) => typeof item === 'string') : [];
}

/** The row's value, or undefined with its failure recorded. */
async function open(
  keys: SecretKeys,
  poller: string,
  row: Row,
  failures: DecryptFailure[],
): Promise<string | undefined> {
  try {
    return await decryptSecret(keys, poller, row.name, row);
  } catch (error) {
    if (!(error instanceof SecretDecryptError)) throw error;
    failures.push(...error.failures);
    return undefined;
  }
}
