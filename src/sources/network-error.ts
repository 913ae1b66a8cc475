/**
 * What a fetch that threw before any answer means, in words that name the host. workerd
 * reports a failed DNS lookup only as `internal error; reference = <id>` (the cause goes to
 * its own log, not to the Worker) and a refused connection as `Network connection lost.`:
 * both seen from workerd's own fetch (`http://nonexistent.invalid/`,
 * `http://127.0.0.1:1/`). Node-style texts (`ENOTFOUND`, `ECONNREFUSED`, `ETIMEDOUT`) are
 * read too, for fetchers that pass them on.
 */

type Known = { test: RegExp; say: (host: string) => string };

const KNOWN: readonly Known[] = [
  {
    // workerd's only word for a failed lookup: a DNS failure is by far its likeliest cause.
    test: /^internal error; reference = /,
    say: (host) => `DNS lookup failed for ${host}, most likely (or no connection could be made)`,
  },
  {
    test: /ENOTFOUND|EAI_AGAIN|getaddrinfo|lookup address|name or service not known|\bDNS\b/i,
    say: (host) => `DNS lookup failed for ${host}`,
  },
  {
    test: /ECONNREFUSED|connection refused|network connection lost/i,
    say: (host) => `connection refused (or lost) by ${host}: is it up, and is the port right?`,
  },
  {
    test: /ETIMEDOUT|connection timed out|connect timeout/i,
    say: (host) => `connection timed out: ${host} did not answer`,
  },
];

/**
 * The reason a fetch to `url` threw, for a run's error: a known network failure named with
 * the host, then what the runtime said (for the record); anything else as it was thrown.
 */
export function fetchFailure(error: unknown, url: URL | string): string {
  const said = error instanceof Error ? error.message : String(error);
  const known = KNOWN.find((entry) => entry.test.test(said));
  if (known === undefined) return String(error);
  const host = typeof url !== 'string' ? url.host : URL.canParse(url) ? new URL(url).host : url;
  return `${known.say(host)} (${JSON.stringify(said)})`;
}
