/**
 * The Worker's bindings and secrets as plain values by name, as the config's `${NAME}`
 * interpolation and a config-named binding (`source.service`, `deliver.binding`) read them.
 * The one place `Env` is read by name; a leaf module, so that code the engine tests load in
 * plain Node (delivery) can use it without the catalog's Durable Object imports. A copy of
 * its own properties (a few dozen): `Env` is an interface, with no index to read it by.
 */
export function envValues(env: Env): Record<string, unknown> {
  return Object.fromEntries(Object.entries(env));
}
