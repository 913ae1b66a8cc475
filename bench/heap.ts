/**
 * The JS heap of one Worker's isolate in the bench's workerd, read through the V8 inspector
 * (`Runtime.getHeapUsage`): the figure the platform's 128 MB limit is about, without the
 * harness's isolate or workerd's own buffers.
 */
import { inspect } from './inspector.ts';

export interface HeapWatch {
  /** Used heap now, in MB (workerd's inspector does not offer a forced GC). */
  used(): Promise<number>;
  /** Samples the used heap every `everyMs` until `stop()`; resolves to the peak, in MB. */
  watch(everyMs?: number): { stop(): Promise<number> };
  close(): void;
}

export async function heapOf(worker: string): Promise<HeapWatch> {
  const session = await inspect(worker);
  const usedMb = async () =>
    (Number((await session.send('Runtime.getHeapUsage')).usedSize) || 0) / 1024 / 1024;
  return {
    used: usedMb,
    watch(everyMs = 50) {
      let peak = 0;
      let running = true;
      const loop = (async () => {
        while (running) {
          peak = Math.max(peak, await usedMb());
          await new Promise((resolve) => setTimeout(resolve, everyMs));
        }
      })();
      return {
        async stop() {
          running = false;
          await loop;
          return peak;
        },
      };
    },
    close: () => session.close(),
  };
}
