/**
 * A request body as text, never read past `max` bytes: one that declares more (Content-Length)
 * is refused before a byte is read, and one that sends more (no length, or a false one) is
 * refused as soon as it crosses `max`, so a large body never sits whole in the isolate.
 */
export async function readCappedText(
  request: Request,
  max: number,
): Promise<{ ok: true; text: string } | { ok: false }> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > max) {
    await request.body?.cancel().catch(() => undefined);
    return { ok: false };
  }
  if (request.body === null) return { ok: true, text: '' };
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { ok: true, text: text + decoder.decode() };
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return { ok: false };
    }
    text += decoder.decode(value, { stream: true });
  }
}
