import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: import('cloudflare:test').D1Migration[];
      /** test/support/network.ts, reached through workerd's own fetch (vitest.config.ts). */
      TEST_NETWORK: Fetcher;
    }
  }
}

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
