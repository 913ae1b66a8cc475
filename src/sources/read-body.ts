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
  const bytes = byteReader(response.body);
  const chunks = bytes === null ? response.body.getReader() : null;
  // One race with the deadline for the whole body, not one per chunk.
  const reading = chunks
    ? readChunks(chunks, limit)
    : readBlocks(bytes as ReadableStreamBYOBReader, limit);
  const read = await Promise.race([reading, deadline.expired]);
  if (read === TIMED_OUT) {
    await (bytes ?? chunks)?.cancel().catch(() => undefined);
    return { ok: false, reason: 'timed_out' };
  }
  return read;
}

/** A reader into buffers of our own, when the body is a byte stream (as fetch's are). */
function byteReader(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: 'byob' });
  } catch {
    return null; // a stream of chunks (a Response built from a JavaScript stream)
  }
  // readAtLeast is workerd's; elsewhere (Node, in the engine's tests) chunk by chunk.
  if (typeof reader.readAtLeast === 'function') return reader;
  reader.releaseLock();
  return null;
}

/** The first block: a page of a few hundred records fits, and is read in one call. */
const FIRST_BLOCK = 64 * 1024;

/**
 * Reads the body into growing blocks, each filled by one call into the runtime
 * (`readAtLeast`), refusing it once it crosses `limit`: a page costs a call or two instead of
 * one per network chunk.
 */
async function readBlocks(reader: ReadableStreamBYOBReader, limit: number): Promise<BodyRead> {
  const blocks: Uint8Array[] = [];
  let size = 0;
  let next = Math.min(FIRST_BLOCK, limit + 1);
  try {
    for (;;) {
      const chunk = await reader.readAtLeast(next, new Uint8Array(next));
      if (chunk.value && chunk.value.byteLength > 0) {
        blocks.push(chunk.value);
        size += chunk.value.byteLength;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          return { ok: false, reason: 'too_big', limit };
        }
      }
      if (chunk.done) break;
      next = Math.max(1, Math.min(size, limit + 1 - size));
    }
  } catch (error) {
    return { ok: false, reason: 'broken', error: String(error) };
  }
  const decoder = new TextDecoder();
  if (blocks.length === 1 && blocks[0]) return { ok: true, text: decoder.decode(blocks[0]) };
  const whole = new Uint8Array(size);
  let at = 0;
  for (const block of blocks) {
    whole.set(block, at);
    at += block.byteLength;
  }
  return { ok: true, text: decoder.decode(whole) };
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
