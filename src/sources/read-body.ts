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
 *
 * A declared length is never trusted for how much is read: a compressed body declares its
 * compressed size and fetch() hands over what it decodes to, and a Worker behind a service
 * binding can declare anything. Every body is counted as it arrives.
 */
export async function readBody(
  response: Response,
  limit: number,
  deadline: Deadline,
): Promise<BodyRead> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit && !response.headers.has('content-encoding')) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_big', limit };
  }
  if (response.body === null) return { ok: true, text: '' };
  const bytes = byteReader(response.body);
  const chunks = bytes === null ? response.body.getReader() : null;
  // One race with the deadline for the whole body, not one per chunk.
  // A compressed body's declared length is that of its compressed bytes: no size hint.
  const hint = response.headers.has('content-encoding') ? Number.NaN : declared;
  const reading = chunks
    ? readChunks(chunks, limit)
    : readBlocks(bytes as ReadableStreamBYOBReader, limit, hint);
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

/** The first block when nothing better is known: a page of a few hundred records fits. */
const FIRST_BLOCK = 64 * 1024;
/** The largest block kept for the next body: above it, memory goes back to the isolate. */
const KEPT_BLOCK = 1024 * 1024;

/**
 * One block kept from the last body read in this isolate, for the next: a fresh buffer is
 * allocated and zeroed for every page otherwise. Taken while a body is read, so two reads
 * at once never share it.
 */
let spare: ArrayBuffer | null = null;

function firstBlock(limit: number, declared: number): Uint8Array<ArrayBuffer> {
  // A declared length is a good guess of the size (one more byte shows the end), not a bound,
  // and not trusted with a large allocation: a larger body grows its blocks as it arrives.
  const guess = declared >= 0 ? Math.min(declared + 1, KEPT_BLOCK) : FIRST_BLOCK;
  const wanted = Math.min(limit + 1, guess);
  const kept = spare;
  spare = null;
  if (kept !== null && kept.byteLength >= wanted) {
    return new Uint8Array(kept, 0, Math.min(kept.byteLength, limit + 1));
  }
  return new Uint8Array(Math.max(wanted, Math.min(FIRST_BLOCK, limit + 1)));
}

/**
 * Reads the body into growing blocks, each filled by one call into the runtime
 * (`readAtLeast`), refusing it once it crosses `limit`: a page costs a call or two instead of
 * one per network chunk. A block that comes back less than full is the end of the body.
 */
async function readBlocks(
  reader: ReadableStreamBYOBReader,
  limit: number,
  declared: number,
): Promise<BodyRead> {
  const blocks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  let block = firstBlock(limit, declared);
  try {
    for (;;) {
      const wanted = block.byteLength;
      const chunk = await reader.readAtLeast(wanted, block);
      const value = chunk.value;
      // An empty body gives its block back at once.
      if (value && value.byteLength === 0 && blocks.length === 0) keep(value.buffer);
      if (value && value.byteLength > 0) {
        blocks.push(value);
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          return { ok: false, reason: 'too_big', limit };
        }
      }
      // readAtLeast settles short only at the end: no further call is needed to learn it.
      if (chunk.done || !value || value.byteLength < wanted) break;
      block = new Uint8Array(Math.max(1, Math.min(size, limit + 1 - size)));
    }
  } catch (error) {
    return { ok: false, reason: 'broken', error: String(error) };
  }
  reader.releaseLock();
  const first = blocks[0];
  if (first === undefined) return { ok: true, text: '' };
  if (blocks.length === 1) {
    const text = decoder.decode(first);
    keep(first.buffer);
    return { ok: true, text };
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const part of blocks) {
    whole.set(part, at);
    at += part.byteLength;
  }
  keep(first.buffer);
  return { ok: true, text: decoder.decode(whole) };
}

function keep(buffer: ArrayBuffer): void {
  if (buffer.byteLength <= KEPT_BLOCK && (spare === null || spare.byteLength < buffer.byteLength)) {
    spare = buffer;
  }
}

/** Decodes whole bodies (never a stream): no state is carried from one to the next. */
const decoder = new TextDecoder();

/** Reads every chunk as text, refusing the body once it crosses `limit`. */
async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
): Promise<BodyRead> {
  const streaming = new TextDecoder();
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
      text += streaming.decode(chunk.value, { stream: true });
    }
  } catch (error) {
    return { ok: false, reason: 'broken', error: String(error) };
  }
  return { ok: true, text: text + streaming.decode() };
}
