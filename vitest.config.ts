import { fileURLToPath } from 'node:url';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { BOUNDARY_POLLERS } from './test/support/boundary-pollers.ts';
import { TEST_FLEET_POLICY } from './test/support/fleet-policy.ts';
import { testNetwork } from './test/support/network.ts';
import { TEST_POLLERS, TEST_SECRETS } from './test/support/pollers.ts';

/**
 * Each project's test timeout. Vitest's 5 s default is a fast laptop's; the suite runs on 2
 * cores with workerd, and tests that do real work (10,000 deliveries, 100,000 dead letters, a
 * 30-day catch-up) took 4–5.5 s with two suites at once. No test waits on it: what waits on a
 * condition has its own timeout, so this only bounds CPU work on a slow or busy machine.
 */
const TEST_TIMEOUT = 15_000;

export default defineConfig(async () => {
  const migrations = await readD1Migrations('./migrations');
  return {
    test: {
      // The Worker's one-line-per-run logs are for operators, not for test output.
      onConsoleLog: (log: string) => !log.includes('{"event":'),
      projects: [
        {
          // The pure engine, config and sources: plain Node, no workerd.
          test: {
            name: 'engine',
            include: ['test/engine/**/*.test.ts'],
            environment: 'node',
            testTimeout: TEST_TIMEOUT,
          },
          // Modules that declare a Durable Object import its base class; the engine tests only
          // read what such modules declare (the OpenAPI document), so a stand-in is enough.
          resolve: {
            alias: {
              'cloudflare:workers': fileURLToPath(
                new URL('./test/support/cloudflare-workers-shim.ts', import.meta.url),
              ),
            },
          },
        },
        {
          // The Worker, its Durable Objects, storage and alarms, inside workerd.
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                bindings: {
                  ...TEST_SECRETS,
                  POLLERS: JSON.stringify({ ...TEST_POLLERS, ...BOUNDARY_POLLERS }),
                  FLEET_POLICY: JSON.stringify(TEST_FLEET_POLICY),
                  TEST_MIGRATIONS: migrations,
                  DEMO_ERROR_RATE: '0',
                  // A DEMO_OAUTH=1 line in a developer's .dev.vars must not change what the tests run.
                  DEMO_OAUTH: '0',
                },
                serviceBindings: { TEST_NETWORK: testNetwork },
              },
            }),
          ],
          test: {
            name: 'workers',
            include: ['test/workers/**/*.test.ts'],
            testTimeout: TEST_TIMEOUT,
            setupFiles: ['test/workers/setup.ts'],
          },
        },
      ],
    },
  };
});
