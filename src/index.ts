import { consumeDeliveries } from './delivery/queue-consumer.ts';
import { installDemo } from './demo/install.ts';
import { handlers } from './handlers/index.ts';
import { app } from './http/app.ts';
import { type Shards, watchdog } from './watchdog/index.ts';

export { DemoUpstream } from './demo/upstream.ts';
export { Poller } from './poller/durable-object.ts';
export { Registry } from './registry/registry.ts';
export { WatchdogShard } from './watchdog/shard.ts';

// The built-in demo (its /demo upstream, its handler, DemoUpstream) is composed here, the one
// place that knows it: the app and the handler registry are production modules.
installDemo(app, handlers);

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    // This Worker's own WatchdogShard entrypoint (a loopback binding, typed here because
    // Cloudflare.Exports only knows the main module through GlobalProps).
    const shards = (ctx.exports as { WatchdogShard?: Shards } | undefined)?.WatchdogShard;
    await watchdog(env, controller.scheduledTime, shards ?? null);
  },
  async queue(batch, env, _ctx) {
    await consumeDeliveries(batch, env);
  },
} satisfies ExportedHandler<Env>;
