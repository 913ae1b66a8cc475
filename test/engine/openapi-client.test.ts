import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { parse } from 'smol-toml';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { app } from '../support/worker.ts';

/**
 * A client generated from GET /openapi.json as served, with openapi-typescript as a user
 * would run it (`defaultNonNullable: false`: a key with a default stays optional), then
 * type-checked against bodies: what the compiler says of PUT /pollers/{name}'s body is what
 * an editor using the generated client says. Compiling takes a few seconds on a busy machine.
 */
const COMPILES = { timeout: 60_000 };

const folder = mkdtempSync(join(tmpdir(), 'tidemark-openapi-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

type Document = {
  servers?: { url: string }[];
  paths: Record<string, Record<string, { operationId?: string }>>;
};

/**
 * GET /openapi.json from the app as a deployment serves it. Its reads are opened with
 * `public_status` (checking a token takes workerd's crypto.subtle.timingSafeEqual).
 */
async function served(): Promise<Document> {
  const response = await app.request(
    'https://tidemark.example.workers.dev/openapi.json',
    {},
    { public_status: 'true' },
  );
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

/** Writes the generated client, and a file that assigns each body to PUT's body type. */
async function typeErrors(bodies: Record<string, unknown>): Promise<Record<string, string[]>> {
  const document = await served();
  const client = astToString(await openapiTS(document as never, { defaultNonNullable: false }));
  writeFileSync(join(folder, 'api.ts'), client);
  const lines = Object.entries(bodies).map(
    ([name, body]) => `export const ${name}: PutBody = ${JSON.stringify(body, null, 2)};`,
  );
  writeFileSync(
    join(folder, 'bodies.ts'),
    [
      "import type { paths } from './api.ts';",
      "type PutBody = paths['/pollers/{name}']['put']['requestBody']['content']['application/json'];",
      ...lines,
    ].join('\n'),
  );
  const program = ts.createProgram([join(folder, 'bodies.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    types: [],
  });
  const errors: Record<string, string[]> = Object.fromEntries(
    Object.keys(bodies).map((name) => [name, []]),
  );
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (file === undefined || diagnostic.start === undefined) throw new Error(message);
    // The body a diagnostic is about: the last one declared up to the end of its line.
    const lineEnd = file.text.indexOf('\n', diagnostic.start);
    const text = file.text.slice(0, lineEnd === -1 ? undefined : lineEnd);
    const name = [...text.matchAll(/export const (\w+): PutBody/g)].at(-1)?.[1];
    if (file.fileName.endsWith('bodies.ts') && name !== undefined) errors[name]?.push(message);
    else throw new Error(`${file.fileName}: ${message}`);
  }
  return errors;
}

/**
 * The example pollers of examples/wrangler.toml and examples/apis/ (request bodies, GraphQL
 * queries): real configs, each a PUT body.
 */
function examplePollers(): Record<string, unknown> {
  const toml = parse(readFileSync('examples/wrangler.toml', 'utf8')) as {
    vars: { POLLERS: Record<string, unknown> };
  };
  const files = readdirSync('examples/apis').filter((file) => file.endsWith('.toml'));
  const apis = files.map((file) => [
    file.replace(/\.toml$/, '').replaceAll('-', '_'),
    parse(readFileSync(`examples/apis/${file}`, 'utf8')),
  ]);
  return { ...toml.vars.POLLERS, ...Object.fromEntries(apis) };
}

describe('a client generated from /openapi.json', () => {
  it('names every operation once, and says where the API is served', async () => {
    const document = await served();
    const ids = Object.values(document.paths).flatMap((operations) =>
      Object.values(operations).map((operation) => operation.operationId),
    );
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/pollers/{name}']?.put?.operationId).toBe('putPollersByName');
    expect(document.servers).toEqual([
      expect.objectContaining({ url: 'https://tidemark.example.workers.dev' }),
    ]);
  });

  it(
    "takes every example poller as PUT /pollers/{name}'s body, and refuses a misspelt key and a wrong type",
    COMPILES,
    async () => {
      const examples = examplePollers();
      const [first] = Object.values(examples) as Record<string, unknown>[];
      const bodies: Record<string, unknown> = {
        ...Object.fromEntries(
          Object.entries(examples).map(([name, config]) => [`ok_${name}`, config]),
        ),
        ok_keep_secrets: { ...first, keep_secrets: true },
        misspelt: { ...first, max_atempts: 3 },
        wrong_type: { ...first, max_attempts: '3' },
        no_source: { ...first, source: undefined },
      };
      const errors = await typeErrors(bodies);
      const accepted = Object.keys(examples).map((name) => `ok_${name}`);
      expect(accepted.length).toBeGreaterThan(3);
      for (const name of [...accepted, 'ok_keep_secrets']) expect(errors[name], name).toEqual([]);
      expect(errors.misspelt?.join('\n')).toContain('\'"max_atempts"\' does not exist');
      expect(errors.wrong_type?.join('\n')).toContain(
        "'string' is not assignable to type 'number'",
      );
      expect(errors.no_source).not.toEqual([]);
    },
  );
});
