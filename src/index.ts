import { consumeDeliveries } from './delivery/queue-consumer.ts';
import { app } from './http/app.ts';
import { watchdog } from './watchdog.ts';

export { DemoUpstream } from './demo/upstream.ts';
export { Poller } from './poller/durable-object.ts';
export { Registry } from './registry/registry.ts';

export default {
  fetch: app.fetch,
  async scheduled(controller, env, _ctx) {
    await watchdog(env, controller.scheduledTime);
  },
  async queue(batch, env, _ctx) {
    await consumeDeliveries(batch, env);
  },
} satisfies ExportedHandler<Env>;
