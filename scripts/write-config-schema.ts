/**
 * `npm run schema`: writes schema/poller.schema.json, the JSON Schema of one poller's config
 * (what `[vars.POLLERS.<name>]` holds, and the body of `PUT /pollers/:name`), from the zod
 * schema the Worker validates with (z.toJSONSchema, as the config is written: before
 * defaults and parsing). test/engine/config-json-schema.test.ts fails when it is stale.
 */
import { writeFormatted } from '../sim/write-formatted.ts';
import { configJsonSchema } from '../src/config/json-schema.ts';

const path = 'schema/poller.schema.json';
// In the project's own format: `npm run lint` checks it like any other file.
writeFormatted(path, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log(`wrote ${path}`);
