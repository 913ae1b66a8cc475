/**
 * A virtual clock for a discrete-event simulation: `sleep` returns a promise that resolves
 * when the driver advances time past it. Concurrent "tasks" interleave by virtual time, so a
 * slow run, a second cron fire and an alarm really do overlap, as in a Durable Object.
 */
export class VirtualClock {
  now: number;
  private timers: { at: number; seq: number; resolve: () => void }[] = [];
  private seq = 0;

  constructor(start: number) {
    this.now = start;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.timers.push({ at: this.now + Math.max(0, ms), seq: this.seq++, resolve });
    });
  }

  /** Runs every timer due up to `until` in time order, letting each continuation settle. */
  async advanceTo(until: number): Promise<void> {
    for (;;) {
      await settle();
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      this.now = Math.max(this.now, next.at);
      next.resolve();
    }
    this.now = Math.max(this.now, until);
    await settle();
  }

  /** Runs timers in time order until `done()` (say, a run has finished); time stops there. */
  async runUntil(done: () => boolean): Promise<void> {
    for (;;) {
      await settle();
      if (done()) return;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) return;
      this.now = Math.max(this.now, next.at);
      next.resolve();
    }
  }

  pending(): number {
    return this.timers.length;
  }
}

/** Lets every queued promise continuation run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
