/** The demo upstream's one object: its sessions, and its OAuth provider's tokens. */
export function demoUpstream(env: Env) {
  return env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
}
