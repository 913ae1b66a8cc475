/**
 * `.dev.vars` for `npm start`, made from the committed `.dev.vars.example`: no local secret
 * is ever a value that sits in the repository.
 */

/** A token to generate: `NAME=change-me` becomes 16 random bytes in hex. */
export const TOKEN_PLACEHOLDER = 'change-me';
/** A webhook signing secret to generate: "whsec_" + base64 of 32 random bytes. */
export const SIGNING_SECRET_PLACEHOLDER = 'whsec_change-me';
/** A key to generate (SECRETS_KEY): base64 of 32 random bytes, 44 characters. */
export const KEY_PLACEHOLDER = 'key_change-me';
/**
 * WEBHOOK_SECRET values that were once committed to .dev.vars.example, and so are public:
 * a .dev.vars still holding one gets a fresh secret.
 */
const PUBLISHED_SECRETS = new Set(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);

/**
 * What a runtime poller (PUT /pollers/:name) may reach under `npm start`, where no
 * FLEET_POLICY is deployed: the Worker's WEBHOOK_SECRET (the fleet examples of
 * docs/fleet.md sign with it), the delivery queue and the demo's handler, any public https host. Passed as `--var`,
 * never in wrangler.toml's deployed [vars]; a FLEET_POLICY line in .dev.vars replaces it.
 */
export const LOCAL_FLEET_POLICY = {
  env: ['WEBHOOK_SECRET'],
  bindings: ['DELIVERY_QUEUE'],
  handlers: ['demo-sessions'],
};

/** The `wrangler dev` arguments that give it the local FLEET_POLICY, unless .dev.vars has one. */
export function localPolicyArgs(devVars: Record<string, string>): string[] {
  if (devVars.FLEET_POLICY !== undefined) return [];
  return ['--var', `FLEET_POLICY:${JSON.stringify(LOCAL_FLEET_POLICY)}`];
}

export type RandomBytes = (count: number) => Uint8Array;

const cryptoRandom: RandomBytes = (count) => crypto.getRandomValues(new Uint8Array(count));

/**
 * The text with every `NAME=<placeholder>` line (and every published secret) given a fresh
 * random value. Only assignments are touched: comments and other lines stay as written,
 * even when they mention a placeholder.
 */
export function fillDevVars(text: string, random: RandomBytes = cryptoRandom): string {
  return text
    .split('\n')
    .map((line) => {
      const match = /^(\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*)"?([^"\s]*)"?\s*$/.exec(line);
      const value = match?.[2];
      if (match?.[1] === undefined || value === undefined) return line;
      if (value === TOKEN_PLACEHOLDER) return `${match[1]}${hex(random(16))}`;
      if (value === KEY_PLACEHOLDER) return `${match[1]}${base64(random(32))}`;
      if (value === SIGNING_SECRET_PLACEHOLDER || PUBLISHED_SECRETS.has(value))
        return `${match[1]}whsec_${base64(random(32))}`;
      return line;
    })
    .join('\n');
}

/**
 * What an existing .dev.vars lacks of the example, to append: each variable the example sets
 * that the file does not (one added to the example since the file was made, SECRETS_KEY say),
 * with the comment lines just above it, its placeholder given a fresh value. Empty when
 * nothing is missing; the file's own lines are never changed.
 */
export function missingDevVars(
  text: string,
  example: string,
  random: RandomBytes = cryptoRandom,
): { names: string[]; lines: string } {
  const present = parseDevVars(text);
  const names: string[] = [];
  const added: string[] = [];
  let comments: string[] = [];
  for (const line of example.split('\n')) {
    if (line.startsWith('#')) {
      comments.push(line);
      continue;
    }
    const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];
    if (name !== undefined && !(name in present)) {
      names.push(name);
      added.push(...comments, fillDevVars(line, random));
    }
    comments = [];
  }
  return { names, lines: added.length === 0 ? '' : `${added.join('\n')}\n` };
}

/** The variables of a .dev.vars text (NAME=value, optionally quoted; comments skipped). */
export function parseDevVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"?(.*?)"?\s*$/.exec(line);
    if (match?.[1] && match[2] !== undefined) vars[match[1]] = match[2];
  }
  return vars;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}
