import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/http/openapi/document.ts';
import { app } from '../support/worker.ts';

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    // As it is served: JSON.
    const document = JSON.parse(JSON.stringify(openApiDocument(app))) as Record<string, unknown>;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });
});
