/**
 * The JS heap of one Worker's isolate in the bench's workerd, read through the V8 inspector
 * (`Runtime.getHeapUsage`): the figure the platform's 128 MB limit is about, without the
 * harness's isolate or workerd's own buffers.
 */
import { INSPECTOR_PORT } from './workerd.ts';

export interface HeapWatch {
  /** Used heap now, in MB (workerd's inspector does not offer a forced GC). */
  used(): Promise<number>;
  /** Samples the used heap every `everyMs` until `stop()`; resolves to the peak, in MB. */
  watch(everyMs?: number): { stop(): Promise<number> };
  close(): void;
}

export async function heapOf(worker: string): Promise<HeapWatch> {
  const socket = new WebSocket(`ws://127.0.0.1:${INSPECTOR_PORT}/core:user:${worker}`);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let next = 1;
  const pending = new Map<number, (result: Record<string, number>) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: Record<string, number>;
    };
    if (message.id !== undefined) pending.get(message.id)?.(message.result ?? {});
  });
  const send = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method }));
    });
  const usedMb = async () => ((await send('Runtime.getHeapUsage')).usedSize ?? 0) / 1024 / 1024;
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
    close: () => socket.close(),
  };
}
