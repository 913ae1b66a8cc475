import type { DeliverConfig } from '../config/schema.ts';
import type { Deliverer } from '../engine/ports.ts';
import { handlers } from '../handlers/index.ts';
import type { HttpFetch } from '../sources/http-source.ts';
import { HandlerDeliverer } from './handler.ts';
import { isValidSigningSecret } from './standard-webhooks.ts';
import { WebhookDeliverer } from './webhook.ts';

export type DelivererOrError = { ok: true; deliverer: Deliverer } | { ok: false; error: string };

/** Builds the deliverer a poller's `deliver` table asks for, or says what is missing. */
export function createDeliverer(
  poller: string,
  config: DeliverConfig,
  env: Env,
  fetcher: HttpFetch,
  secrets: readonly string[],
  now: () => number,
): DelivererOrError {
  if (config.type === 'webhook' && config.url !== undefined && config.secret !== undefined) {
    if (!isValidSigningSecret(config.secret)) {
      return {
        ok: false,
        error: 'deliver.secret: not a Standard Webhooks secret ("whsec_" + base64)',
      };
    }
    const webhook = { ...config, url: config.url, secret: config.secret };
    return { ok: true, deliverer: new WebhookDeliverer(poller, webhook, fetcher, secrets, now) };
  }
  if (config.type === 'handler' && config.name !== undefined) {
    const handler = handlers[config.name];
    if (!handler) {
      const known = Object.keys(handlers).join(', ') || 'none';
      return {
        ok: false,
        error: `deliver.name: no handler "${config.name}" is registered in src/handlers (registered: ${known})`,
      };
    }
    return {
      ok: true,
      deliverer: new HandlerDeliverer(poller, config.name, handler, env, secrets),
    };
  }
  return { ok: false, error: `deliver.type: "${config.type}" is not available in this release` };
}
