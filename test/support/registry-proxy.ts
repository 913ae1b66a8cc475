import { env } from 'cloudflare:workers';
import { registryOf } from '../../src/registry/registry.ts';

export type RegistryStub = ReturnType<typeof registryOf>;

/**
 * The Worker's env with its registry seen through `around`: every RPC call of the registry
 * goes through it (its name, and the real call to make), so a test can count the calls or
 * inject something between a call and its caller. Each env has a binding of its own.
 */
export function registryProxy(
  around: (method: string, call: () => Promise<unknown>) => Promise<unknown>,
): Env {
  const real = registryOf(env);
  const stub = new Proxy(real, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) =>
        around(property, () => Promise.resolve(Reflect.apply(value, target, args)));
    },
  });
  const namespace = {
    idFromName: (name: string) => env.REGISTRY.idFromName(name),
    get: () => stub,
  };
  return { ...env, REGISTRY: namespace as unknown as Env['REGISTRY'] };
}
