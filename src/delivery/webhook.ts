import { redact } from '../config/interpolate.ts';
import { DeadlineClock } from '../deadline.ts';
import { classifyDeliveryStatus, type DeliveryResult } from '../engine/classify.ts';
import type { Deliverer, DeliveryItem, DeliveryOp } from '../engine/ports.ts';
import type { HttpFetch } from '../sources/http-source.ts';
import { fetchFailure } from '../sources/network-error.ts';
import type { BuildDeliverer } from './build.ts';
import type { WebhookConfig } from './kinds/webhook.ts';
import { sha256Hex, signingSecretProblem, signWebhook, webhookId } from './standard-webhooks.ts';

/** Builds a poller's webhook deliverer: refuses a secret too weak to sign; gates every request. */
export const buildWebhook: BuildDeliverer<WebhookConfig> = (
  config,
  { poller, fetcher, secrets, now, sender },
) => {
  const secretProblem = signingSecretProblem(config.secret);
  if (secretProblem !== undefined) {
    return { ok: false, error: `deliver.secret: ${secretProblem}` };
  }
  const gated: HttpFetch = (request) => {
    sender.check();
    return fetcher(request);
  };
  return { ok: true, deliverer: new WebhookDeliverer(poller, config, gated, secrets, now) };
};

/** The JSON body of one webhook delivery, or one element of a batch. */
export interface WebhookBody {
  /** The Standard Webhooks event type: `record.updated`, or `record.deleted` for a delete. */
  type: EventType;
  /** `upsert`, or `delete`: the stream showed the record deleted (`source.deleted`, R15). */
  op: DeliveryOp;
  poller: string;
  id: string;
  version: string;
  idempotency_key: string;
  /** source.children: the id of the parent record this one was listed under. */
  parent?: string;
  record: unknown;
}

type EventType = 'record.updated' | 'record.deleted';

/** The event type of an operation, as receivers of Standard Webhooks route on it. */
export function eventType(op: DeliveryOp): EventType {
  return op === 'delete' ? 'record.deleted' : 'record.updated';
}

/**
 * Webhook delivery, signed per Standard Webhooks. `batch = 1`: one POST per record, its body
 * the record's envelope (with the readable `idempotency_key`) and `webhook-id` the
 * header-safe id derived from it (`webhookId`). `batch > 1`: a JSON array of envelopes (each
 * with its own key), `webhook-id` and `tidemark-batch-id` naming the batch. 2xx is success;
 * a 3xx is never followed; the rest is classified per SEMANTICS.md.
 */
export class WebhookDeliverer implements Deliverer {
  /** The request as errors show it, without secrets: built once, when first needed. */
  private shownRequest: string | undefined;
  /** One timer for the batches in flight, not one per batch. */
  private readonly deadlines: DeadlineClock;

  constructor(
    private readonly poller: string,
    private readonly config: WebhookConfig,
    private readonly fetcher: HttpFetch,
    private readonly secrets: readonly string[],
    private readonly now: () => number,
  ) {
    this.deadlines = new DeadlineClock(config.timeout);
  }

  hold(): () => void {
    return this.deadlines.hold();
  }

  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    const envelopes = items.map(
      ({ update, op, idempotencyKey }): WebhookBody => ({
        type: eventType(op),
        op,
        poller: this.poller,
        id: update.id,
        version: update.version,
        idempotency_key: idempotencyKey,
        ...(update.parent === undefined ? {} : { parent: update.parent }),
        record: update.record,
      }),
    );
    const single = this.config.batch === 1 && envelopes.length === 1;
    let body: string;
    try {
      body = JSON.stringify(single ? envelopes[0] : envelopes);
    } catch (error) {
      // A record no JSON encoder here can write (nested past the stack): no retry will, so
      // it is refused like a 4xx, tried alone, and kept as a dead letter (R8).
      return { kind: 'rejected', error: `the record cannot be sent as JSON: ${String(error)}` };
    }
    const messageId = single
      ? await webhookId(items[0]?.idempotencyKey ?? '')
      : await batchId(items);
    const timestamp = Math.floor(this.now() / 1000);
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'webhook-id': messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': await signWebhook(this.config.secret, messageId, timestamp, body),
        ...(single ? {} : { 'tidemark-batch-id': messageId }),
      };
      const outcome = await this.deadlines.run((signal) => this.post(headers, body, signal));
      return outcome.timedOut
        ? { kind: 'retry', error: `${this.shown()}: ${outcome.error}` }
        : outcome.value;
    } catch (error) {
      const reason = fetchFailure(error, this.config.url);
      return { kind: 'retry', error: `${this.shown()}: ${redact(reason, this.secrets)}` };
    }
  }

  /** `POST <url>` with secrets redacted, for errors only: a success never needs it. */
  private shown(): string {
    this.shownRequest ??= `POST ${redact(this.config.url, this.secrets)}`;
    return this.shownRequest;
  }

  /** One POST, its answer read and classified. */
  private async post(
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<DeliveryResult> {
    const response = await this.fetcher(
      new Request(this.config.url, {
        method: 'POST',
        headers,
        body,
        // A redirect followed by fetch() turns the POST into a GET without a body, and the
        // 200 at its end would count as delivered: a 3xx is reported instead.
        redirect: 'manual',
        signal,
      }),
    );
    if (response.ok) {
      // Success needs no message: the body is not read, and nothing is redacted.
      await response.body?.cancel();
      return classifyDeliveryStatus(response.status, '');
    }
    const shown = this.shown();
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      return classifyDeliveryStatus(
        response.status,
        `${shown}: HTTP ${response.status}: the receiver redirected to ${this.location(response)}; set deliver.url to the final URL`,
      );
    }
    const text = await response.text().catch(() => '');
    const snippet = JSON.stringify(redact(text, this.secrets).slice(0, 200));
    return classifyDeliveryStatus(
      response.status,
      `${shown}: HTTP ${response.status}; body ${snippet}`,
    );
  }

  /** Where a redirect points, absolute and without secrets, for the error message. */
  private location(response: Response): string {
    const location = response.headers.get('location');
    if (location === null) return '(no Location header)';
    let absolute = location;
    try {
      absolute = new URL(location, this.config.url).href;
    } catch {
      // Not a URL: shown as it came.
    }
    return redact(absolute, this.secrets);
  }
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** A batch is named by its contents, so a retried batch carries the same id. */
async function batchId(items: DeliveryItem[]): Promise<string> {
  return `batch_${await sha256Hex(items.map((item) => item.idempotencyKey).join('\n'))}`;
}
