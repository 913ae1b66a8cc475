/**
 * Which hosts a runtime poller's URLs may name (FLEET_POLICY.hosts). Hosts are compared as
 * the URL parser gives them: lower case, punycode, IPv4 in dotted form however it was
 * written (`2130706433`, `0x7f.1`), IPv6 in brackets.
 */

/** A policy entry: `api.example.com`, `*.example.com`, an IPv4 address or `[IPv6]`. */
const HOST_ENTRY = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*$|^\[[0-9a-f:.]+\]$/i;

/** Names that only ever mean this machine or a private network. */
const PRIVATE_SUFFIXES = ['.localhost', '.internal', '.local'];

/** Why `entry` cannot be a FLEET_POLICY.hosts entry, or undefined. */
export function hostEntryProblem(entry: string): string | undefined {
  if (HOST_ENTRY.test(entry)) return undefined;
  return `"${entry}" is not a host: write "api.example.com" or "*.example.com" (no scheme, port or path; an internationalized name in its xn-- form)`;
}

/** Whether `host` matches `entry`: `*.example.com` any subdomain (not the apex), else exactly. */
export function matchesHostEntry(host: string, entry: string): boolean {
  const name = withoutTrailingDot(host.toLowerCase());
  const wanted = entry.toLowerCase();
  if (wanted.startsWith('*.')) return name.endsWith(wanted.slice(1));
  return name === canonical(wanted);
}

/** An entry as the URL parser writes a host (`[0:0::1]` is `[::1]`), so that both compare. */
function canonical(entry: string): string {
  try {
    return withoutTrailingDot(new URL(`https://${entry}/`).hostname);
  } catch {
    return entry;
  }
}

/**
 * Whether `host` is not a public host: localhost, `*.localhost`, `*.internal`, `*.local`, and
 * IP literals that are loopback, private (with the shared 100.64/10), link-local,
 * unique-local, unspecified or multicast, IPv4 inside IPv6 included.
 */
export function isPrivateHost(host: string): boolean {
  const name = withoutTrailingDot(host.toLowerCase());
  if (name === 'localhost' || PRIVATE_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    return true;
  }
  if (name.startsWith('[') && name.endsWith(']')) return isPrivateIpv6(name.slice(1, -1));
  const v4 = ipv4Octets(name);
  return v4 !== undefined && isPrivateIpv4(v4);
}

function withoutTrailingDot(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** The four octets of a dotted IPv4 address, or undefined for a name. */
function ipv4Octets(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined;
  const octets = parts.map(Number);
  return octets.every((octet) => octet <= 255) ? octets : undefined;
}

function isPrivateIpv4([a = 0, b = 0]: number[]): boolean {
  return (
    a === 0 || // "this network", 0.0.0.0 unspecified
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space (carrier NAT)
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224 // multicast, reserved and broadcast
  );
}

function isPrivateIpv6(text: string): boolean {
  const groups = ipv6Groups(text);
  // Not an address the URL parser would give: refused rather than guessed at.
  if (groups === undefined) return true;
  const [first = 0] = groups;
  const zeros = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeros(7) && (groups[7] === 0 || groups[7] === 1)) return true; // :: and ::1
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique-local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d).
  const mapped = zeros(5) && (groups[5] === 0xffff || groups[5] === 0);
  const nat64 = first === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (mapped || nat64) {
    const high = groups[6] ?? 0;
    const low = groups[7] ?? 0;
    return isPrivateIpv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  }
  return false;
}

/** The eight 16-bit groups of an IPv6 address as the URL parser writes it (hex, `::`). */
function ipv6Groups(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (half: string | undefined) =>
    half === undefined || half === '' ? [] : half.split(':');
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...tail];
  if (!all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return all.map((group) => Number.parseInt(group, 16));
}
