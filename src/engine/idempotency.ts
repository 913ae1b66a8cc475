/** R13: every delivery carries `<poller>:<id>:<version>` so receivers can deduplicate too. */
export function idempotencyKey(poller: string, id: string, version: string): string {
  return `${poller}:${id}:${version}`;
}
