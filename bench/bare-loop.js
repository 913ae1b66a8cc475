// The bare loop the bench compares tidemark with, in its own isolate as tidemark is in its
// own: fetch a page, then POST its records, one after the other, until the last page. It does
// the delivery work tidemark does for each batch (the envelope with its idempotency key, the
// batch id, the Standard Webhooks signature) and nothing else: no lease, no checkpoint, no
// ledger, no retries. The upstream is reached through the same service binding and the
// receiver through the same outbound fetch as tidemark's.
const POLLER = 'bare';
const BASE = '2026-01-01T00:00:00.000Z';
const encoder = new TextEncoder();
let signingKey;

function keyPart(text) {
  return text.replaceAll('%', '%25').replaceAll(':', '%3A');
}

async function hex16(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  return Array.from(digest.slice(0, 16), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

async function sign(secret, id, timestamp, body) {
  if (!signingKey) {
    const binary = atob(secret.slice('whsec_'.length));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    signingKey = await crypto.subtle.importKey(
      'raw',
      bytes,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
  }
  const content = encoder.encode(`${id}.${timestamp}.${body}`);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', signingKey, content));
  return `v1,${btoa(String.fromCharCode(...mac))}`;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const latency = url.searchParams.get('latency') ?? '0';
    const total = url.searchParams.get('total');
    const started = Date.now();
    let cursor = null;
    let records = 0;
    for (;;) {
      const target = new URL('https://upstream.bench/items');
      target.searchParams.set('from', BASE);
      target.searchParams.set('limit', '100');
      target.searchParams.set('latency', latency);
      if (total !== null) target.searchParams.set('total', total);
      if (cursor !== null) target.searchParams.set('cursor', cursor);
      const response = await env.UPSTREAM.fetch(target);
      const body = await response.json();
      if (body.items.length > 0) {
        const keys = [];
        const envelopes = body.items.map((record) => {
          const id = String(record.id);
          // Joined, as tidemark builds it: a flat string keeps JSON.stringify on its fast path.
          const key = [keyPart(POLLER), keyPart(id), record.updated_at].join(':');
          keys.push(key);
          // The same envelope as tidemark's (delivery/webhook.ts), its event type and op too.
          return {
            type: 'record.updated',
            op: 'upsert',
            poller: POLLER,
            id,
            version: record.updated_at,
            idempotency_key: key,
            record,
          };
        });
        const payload = JSON.stringify(envelopes);
        const batchId = `batch_${await hex16(keys.join('\n'))}`;
        const timestamp = Math.floor(Date.now() / 1000);
        const posted = await fetch(`https://receiver.bench/hook?latency=${latency}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': batchId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': await sign(env.WEBHOOK_SECRET, batchId, timestamp, payload),
            'tidemark-batch-id': batchId,
          },
          body: payload,
          redirect: 'manual',
        });
        if (posted.status !== 204) throw new Error(`receiver said ${posted.status}`);
        records += body.items.length;
      }
      if (body.next === null) break;
      cursor = body.next;
    }
    return Response.json({ records, ms: Date.now() - started });
  },
};
