/**
 * What `${NAME}` resolves against: the poller's own secrets first, then the Worker's env.
 * Pass it to config interpolation only: bindings and Worker settings are read from `env`.
 */
export function withPollerSecrets(
  env: object,
  own: Readonly<Record<string, string>>,
): Record<string, unknown> {
  return { ...(env as Record<string, unknown>), ...own };
}
