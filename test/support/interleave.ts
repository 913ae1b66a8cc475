import { type RegistryStub, registryProxy } from './registry-proxy.ts';

/**
 * The Worker's env with a registry whose `method` answers as usual, then runs `meanwhile`
 * before its caller sees the answer: a race injected as an interleaving (a DELETE that
 * completes between the watchdog reading its slice and visiting a poller, say), not hoped for.
 */
export function registryThen(
  method: keyof RegistryStub & string,
  meanwhile: () => Promise<void>,
): Env {
  let done = false;
  return registryProxy(async (called, call) => {
    const answer = await call();
    if (called === method && !done) {
      done = true;
      await meanwhile();
    }
    return answer;
  });
}
