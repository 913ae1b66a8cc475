import { type Deadline, TIMED_OUT } from '../deadline.ts';

/** A response body read whole, or why it could not be. */
export type BodyRead =
  | { ok: true; text: string }
  | { ok: false; reason: 'too_big'; limit: number }
  | { ok: false; reason: 'timed_out' }
  | { ok: false; reason: 'broken'; error: string };

/**
 * Reads a body as text, never more than `limit` bytes: a larger body is refused as soon as it
 * says so (Content-Length) or crosses the limit, so one huge page cannot take the isolate's
 * 128 MB. A body that stalls past the deadline is "timed out", not an empty body.
 */
export async function readBody(
  response: Response,
  limit: number,
  deadline: Deadline,
): Promise<BodyRead> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_big', limit };
  }
  if (response.body === null) return { ok: true, text: '' };
  if (declared <= limit) {
    // The body says its size, and the runtime holds it to it: read whole, in one call, not
    // chunk by chunk in JavaScript (most of a page's reading time).
    const text = response.text().then(
      (whole): BodyRead => ({ ok: true, text: whole }),
      (error): BodyRead => ({ ok: false, reason: 'broken', error: String(error) }),
    );
    const read = await Promise.race([text, deadline.expired]);
    if (read !== TIMED_OUT) return read;
    await response.body.cancel().catch(() => undefined);
    return { ok: false, reason: 'timed_out' };
  }
  const reader = response.body.getReader();
  // One race with the deadline for the whole body, not one per chunk.
  const read = await Promise.race([readChunks(reader, limit), deadline.expired]);
  if (read === TIMED_OUT) {
    await reader.cancel().catch(() => undefined);
    return { ok: false, reason: 'timed_out' };
  }
  return read;
}

/** Reads every chunk as text, refusing the body once it crosses `limit`. */
async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
): Promise<BodyRead> {
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      size += chunk.value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'too_big', limit };
      }
      text += decoder.decode(chunk.value, { stream: true });
    }
  } catch (error) {
    return { ok: false, reason: 'broken', error: String(error) };
  }
  return { ok: true, text: text + decoder.decode() };
}
