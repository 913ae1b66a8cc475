import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * A wrangler.toml in a fresh directory, with one valid poller at the top level (and `extra`
 * appended), for the scripts that read one: check-config and deploy.
 */
export function wranglerFixture(extra = '', options: { d1Id?: string } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-config-'));
  const path = join(dir, 'wrangler.toml');
  const d1 = options.d1Id
    ? `[[d1_databases]]\nbinding = "DB"\ndatabase_name = "tidemark-demo"\ndatabase_id = "${options.d1Id}"\n`
    : '';
  writeFileSync(
    path,
    `name = "fixture"
main = "${resolve('src/index.ts')}"
compatibility_date = "2026-11-01"

[triggers]
crons = ["* * * * *"]

${d1}
[vars]
REGION = "eu"

[vars.POLLERS.orders]
cron = "* * * * *"
[vars.POLLERS.orders.source]
url = "https://api.example.com/\${REGION}/orders"
from_param = "since"
headers = { Authorization = "Bearer \${ORDERS_TOKEN}" }
[vars.POLLERS.orders.deliver]
type = "webhook"
url = "https://example.com/hooks"
secret = "\${WEBHOOK_SECRET}"
${extra}`,
  );
  return path;
}

/** An [env.staging] whose poller has a duration written as a number. */
export const BROKEN_STAGING = `
[env.staging.vars]
REGION = "eu"
[env.staging.vars.POLLERS.orders]
cron = "* * * * *"
lease_ttl = 900
[env.staging.vars.POLLERS.orders.source]
url = "https://staging.example.com/orders"
from_param = "since"
[env.staging.vars.POLLERS.orders.deliver]
type = "handler"
name = "orders"
`;

/** The same [env.staging], valid. */
export const STAGING = BROKEN_STAGING.replace('lease_ttl = 900', 'lease_ttl = "15m"');
