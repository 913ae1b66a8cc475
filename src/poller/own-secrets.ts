import { envValues, isStatic } from '../catalog.ts';
import {
  configuredKeys,
  countKeyRoles,
  isSecretsError,
  type KeyRoleCounts,
  PollerSecrets,
  type SecretOrigins,
  secretKeysFrom,
} from '../secrets/index.ts';
import type { PutSecretReply, SealedSecretListing } from './rpc.ts';

/** One object for "no secrets of its own", so the wiring cache can tell it from a change. */
const NO_SECRETS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export type OwnSecretValues =
  | {
      ok: true;
      values: Record<string, string>;
      /** Where each may be sent (R18), read with the values: a change of either drops both. */
      origins: SecretOrigins;
    }
  | { ok: false; error: string };

/**
 * A poller's own secrets, as its object serves them (the `poller_secrets` table is
 * secrets/store.ts's): decrypted once per instance and kept until one changes, so that the
 * wiring built from them is kept too (the same object while nothing changed).
 */
export class OwnSecrets {
  private decrypted: { values: Record<string, string>; origins: SecretOrigins } | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
  ) {}

  /**
   * The values, decrypted once per instance (and again after a change). During a SECRETS_KEY
   * rotation they are moved to the new key here, on first use.
   */
  async values(poller: string): Promise<OwnSecretValues> {
    if (this.decrypted !== null) return { ok: true, ...this.decrypted };
    const secrets = new PollerSecrets(this.sql);
    if (secrets.list().length === 0) return { ok: true, values: NO_SECRETS, origins: {} };
    const keys = secretKeysFrom(this.env);
    if (!keys.ok) return { ok: false, error: keys.error.message };
    try {
      if (keys.keys.previous) await secrets.reencrypt(keys.keys, poller);
      const values = await secrets.decryptAll(keys.keys, poller);
      this.decrypted = { values, origins: secrets.origins() };
      return { ok: true, ...this.decrypted };
    } catch (error) {
      return {
        ok: false,
        error: isSecretsError(error) ? error.message : 'its secrets could not be read',
      };
    }
  }

  /**
   * Seals and stores one secret, bound to `origins`; refused (503) without a SECRETS_KEY, and
   * (409) when a static poller would never read it: the Worker's secret or var of that name
   * comes first. Stored, it would answer "set" and change nothing (a reconnect that never takes).
   */
  async put(
    poller: string,
    secret: string,
    value: string,
    now: number,
    origins: readonly string[],
  ): Promise<PutSecretReply> {
    if (isStatic(this.env, poller) && envValues(this.env)[secret] !== undefined) {
      return {
        outcome: 'refused',
        status: 409,
        error: `static poller "${poller}" reads the Worker's ${secret} first, so a secret of its own of that name would never be used: set the Worker secret instead (npx wrangler secret put ${secret})`,
      };
    }
    const keys = secretKeysFrom(this.env);
    if (!keys.ok) return { outcome: 'refused', status: 503, error: keys.error.message };
    const secrets = new PollerSecrets(this.sql);
    const result = await secrets.put(keys.keys, poller, secret, value, now, origins);
    if (result.outcome === 'set') this.forget();
    return result;
  }

  /** Binds each secret set before secrets were bound to its origins here (by name). */
  bindUnbound(origins: ReadonlyMap<string, readonly string[]>): void {
    const secrets = new PollerSecrets(this.sql);
    let bound = false;
    for (const [name, reach] of origins) bound = secrets.bindUnbound(name, reach) || bound;
    if (bound) this.forget();
  }

  /** The names, when each was set, the key it is sealed under and its origins; never a value. */
  list(): SealedSecretListing[] {
    return new PollerSecrets(this.sql).listSealed();
  }

  delete(secret: string): boolean {
    const deleted = new PollerSecrets(this.sql).delete(secret);
    if (deleted) this.forget();
    return deleted;
  }

  /** How many of the secrets each of the Worker's keys seals (a rotation's progress). */
  async keyCounts(): Promise<KeyRoleCounts> {
    return countKeyRoles(
      this.list().map((secret) => secret.key_id),
      await configuredKeys(this.env),
    );
  }

  /** Drops the decrypted values (a secret changed, or the object was erased). */
  forget(): void {
    this.decrypted = null;
  }
}
