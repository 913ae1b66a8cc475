import { sameSecret } from '../secrets/same-secret.ts';

/**
 * The per-poller secret that lets an upstream's webhook nudge the poller without holding
 * ADMIN_TOKEN: set it with `PUT /pollers/:name/secrets/NUDGE_TOKEN`. It is an ordinary
 * poller secret (sealed under SECRETS_KEY, write-only), so static pollers can have one too.
 */
export const NUDGE_TOKEN_SECRET = 'NUDGE_TOKEN';

/** True when `presented` is the poller's nudge token (constant time); false when none is set. */
export async function isNudgeToken(
  secrets: Record<string, string>,
  presented: string,
): Promise<boolean> {
  const expected = secrets[NUDGE_TOKEN_SECRET];
  if (expected === undefined || expected === '') return false;
  return sameSecret(presented, expected);
}
