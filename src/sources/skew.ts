/**
 * R11: the upstream's clock minus the Worker's, estimated from the `Date` header against the
 * midpoint of the request. The header has whole seconds, so the estimate is good to ±1 s.
 */
export function measureSkew(
  dateHeader: string | null,
  sentAt: number,
  receivedAt: number,
): number | undefined {
  if (dateHeader === null) return undefined;
  const upstream = Date.parse(dateHeader);
  if (Number.isNaN(upstream)) return undefined;
  // The header is truncated to the second: its true value lies within the following second.
  return upstream + 500 - (sentAt + receivedAt) / 2;
}
