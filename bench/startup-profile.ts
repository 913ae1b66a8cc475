/**
 * The Worker's startup (its global scope: every module evaluated) from the CPU profile
 * `wrangler check startup` writes, read as wrangler reads it. Offline, this is the only
 * startup figure wrangler gives: the "Worker Startup Time" it prints on `deploy` or
 * `versions upload` is Cloudflare's answer to the upload.
 */

/** The fields of a V8 CPU profile (`.cpuprofile`) the summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * Active startup time in ms: the sampled time less the samples in `(idle)`, garbage
 * collection included: wrangler's "Active" line (its summarizeStartupProfile).
 */
export function startupActiveMs(profile: CpuProfile): number {
  const names = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
  const samples = profile.samples ?? [];
  let activeUs = 0;
  // Each time delta belongs to the sample at its index, as wrangler pairs them.
  for (const [index, delta] of (profile.timeDeltas ?? []).entries()) {
    if (names.get(samples[index] ?? 0) !== '(idle)') activeUs += delta;
  }
  return activeUs / 1000;
}
