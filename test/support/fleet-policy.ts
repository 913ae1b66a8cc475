/**
 * The FLEET_POLICY the workerd tests' Worker runs with (vitest.config.ts binds it): what the
 * fleet tests' runtime pollers use, and nothing more. Their upstream's token and the webhook
 * secret are Worker secrets they may name; no binding, no handler, https only, any public
 * host (upstream.test, receiver.test). Tests of other policies pass their own.
 */
export const TEST_FLEET_POLICY = {
  env: ['UPSTREAM_TOKEN', 'WEBHOOK_SECRET'],
};
