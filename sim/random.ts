/** A seeded PRNG (mulberry32): the same seed gives the same world. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A deterministic coin for an event named by `parts`: the same fault schedule for every
 * strategy (whether delivery n of update u fails does not depend on who asks, or when).
 */
export function chance(seed: number, ...parts: (string | number)[]): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (const part of parts) {
    const text = String(part);
    for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    h = Math.imul(h ^ 0xff, 16777619) >>> 0;
  }
  return seededRandom(h)();
}
