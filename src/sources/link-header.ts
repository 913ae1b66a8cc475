/**
 * Finds the target of `rel="next"` in an RFC 8288 `Link` header, among other links and
 * rels (`<…?page=2>; rel="next", <…?page=9>; rel="last"`, or `rel="next last"`).
 */
export function nextLink(header: string | null): string | null {
  if (!header) return null;
  const link = /<([^>]*)>((?:\s*;\s*[^;,<]+(?:=(?:"[^"]*"|[^;,]*))?)*)/g;
  for (const match of header.matchAll(link)) {
    const [, target, params = ''] = match;
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(params);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (target !== undefined && rels.includes('next')) return target;
  }
  return null;
}
