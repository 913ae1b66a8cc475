import { consumeDeliveries } from './delivery/queue-consumer.ts';
import { app } from './http/app.ts';
import { dispatchCron } from './schedule.ts';

export { DemoUpstream } from './demo/upstream.ts';
export { Poller } from './poller/durable-object.ts';

export default {
  fetch: app.fetch,
  async scheduled(controller, env, _ctx) {
    await dispatchCron(controller.cron, env);
  },
  async queue(batch, env, _ctx) {
    await consumeDeliveries(batch, env);
  },
} satisfies ExportedHandler<Env>;
