import { registryProxy } from './registry-proxy.ts';

/**
 * The Worker's env with a registry that counts the calls made to it: for
 * `app.request(path, init, counted.env)`, to prove a route reads the registry once, not once
 * per request. Each call of this gives a binding of its own (and so a fresh cache).
 */
export function countingRegistry(): { env: Env; calls: () => string[] } {
  const calls: string[] = [];
  const counted = registryProxy((method, call) => {
    calls.push(method);
    return call();
  });
  return { env: counted, calls: () => [...calls] };
}
