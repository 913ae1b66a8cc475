/**
 * A V8 inspector session with one isolate of the bench's workerd (`inspectorPort`): the
 * Chrome DevTools protocol, one request and its answer at a time.
 */
import { INSPECTOR_PORT } from './workerd.ts';

export interface InspectorSession {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}

export async function inspect(worker: string): Promise<InspectorSession> {
  const socket = new WebSocket(`ws://127.0.0.1:${INSPECTOR_PORT}/core:user:${worker}`);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let next = 1;
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: Record<string, unknown>;
    };
    if (message.id !== undefined) pending.get(message.id)?.(message.result ?? {});
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}
