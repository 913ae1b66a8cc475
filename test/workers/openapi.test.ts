import { describe, expect, it } from 'vitest';
import { call } from '../support/call.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type Access, accessOf, appRoutes } from '../support/route-access.ts';
import { app } from '../support/worker.ts';

const { STATUS_TOKEN } = TEST_SECRETS;

type Operation = {
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
  parameters?: { name: string; in: string; schema?: { maximum?: number; minimum?: number } }[];
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

async function servedDocument(): Promise<Document> {
  const response = await call('GET', '/openapi.json', STATUS_TOKEN);
  expect(response.status).toBe(200);
  return response.json();
}

/** `GET /pollers/{name}/runs` as Hono registers it: `GET /pollers/:name/runs`. */
function routesOf(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map(
      (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
    ),
  );
}

/** Which tokens a route's security requirements accept, as route-access.ts names the rule. */
function accessDeclared(operation: Operation): Access | 'undeclared' {
  const schemes = (operation.security ?? [{ undeclared: [] }]).map(
    (requirement) => Object.keys(requirement).join('+') || 'anyone',
  );
  const key = schemes.sort().join(',');
  const rules: Record<string, Access> = {
    '': 'public',
    'adminToken,statusToken': 'read',
    adminToken: 'admin',
    'adminToken,nudgeToken,nudgeTokenQuery': 'nudge',
    // /healthz: anyone, and a reader sees more.
    'adminToken,anyone,statusToken': 'public',
  };
  return rules[key] ?? 'undeclared';
}

describe('GET /openapi.json: the API described once', () => {
  it('answers a reader with an OpenAPI 3.1 document, and nobody else', async () => {
    expect((await call('GET', '/openapi.json')).status).toBe(401);
    expect((await servedDocument()).openapi).toBe('3.1.0');
  });

  it('describes every route of the app, and no route the app lacks', async () => {
    const documented = routesOf(await servedDocument());
    const routes = appRoutes(app.routes);
    expect(routes.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((route) => !routes.includes(route))).toEqual([]);
  });

  it('says of each route the tokens it takes, as the auth matrix checks them', async () => {
    const document = await servedDocument();
    const wrong = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .map(([method, operation]) => {
          const route = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
          return { route, declared: accessDeclared(operation), actual: accessOf(route) };
        })
        .filter(({ declared, actual }) => declared !== actual),
    );
    expect(wrong).toEqual([]);
  });

  it('lists the refusals of each guarded route: 401 and 503, and 403 for a read-only token', async () => {
    const document = await servedDocument();
    const missing = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => {
        const access = accessDeclared(operation);
        const expected = { read: ['401', '503'], admin: ['401', '403', '503'] }[
          access as 'read' | 'admin'
        ];
        const declared = Object.keys(operation.responses ?? {});
        return (expected ?? [])
          .filter((status) => !declared.includes(status))
          .map((status) => `${method.toUpperCase()} ${path}: ${status}`);
      }),
    );
    expect(missing).toEqual([]);
  });

  it('validates a request with the schema it publishes: a limit past its maximum is a 400', async () => {
    const document = await servedDocument();
    const limit = document.paths['/pollers']?.get?.parameters?.find((p) => p.name === 'limit');
    expect(limit?.schema?.maximum).toBe(500);
    const refused = await call('GET', '/pollers?limit=501', STATUS_TOKEN);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: expect.stringMatching(/^limit: /) });
    expect((await call('GET', '/pollers?limit=500', STATUS_TOKEN)).status).toBe(200);
  });
});
