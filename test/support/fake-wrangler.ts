/**
 * Stands in for wrangler in the tests of scripts/start.ts (START_WRANGLER): `d1 migrations
 * apply` does nothing, and `dev --port P --ip H` serves on H:P a Worker that takes the tokens
 * of the .dev.vars it found when it started, as `wrangler dev` does (it reads .dev.vars only
 * then): GET / answers 200, a request with a bearer token 200 when it is ADMIN_TOKEN or
 * STATUS_TOKEN and 401 otherwise.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseDevVars } from '../../scripts/dev-vars.ts';

const args = process.argv.slice(2);
if (args[0] !== 'dev') process.exit(0);
const option = (name: string) => args[args.indexOf(name) + 1];
const vars = parseDevVars(existsSync('.dev.vars') ? readFileSync('.dev.vars', 'utf8') : '');
const tokens = [vars.ADMIN_TOKEN, vars.STATUS_TOKEN].filter((token) => token !== undefined);

createServer((request, response) => {
  request.resume();
  const presented = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const status = presented === undefined || tokens.includes(presented) ? 200 : 401;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(status === 200 ? { ok: true } : { error: 'invalid token' }));
}).listen(Number(option('--port')), option('--ip'));
