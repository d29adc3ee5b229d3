import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchema, openApiDocument, SCHEMA_FILE } from '../scripts/generate.ts';

describe('SDK types', () => {
  it('sdk/src/schema.d.ts matches the current OpenAPI document (run `npm run sdk:generate` if not)', async () => {
    const doc = await openApiDocument();
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed, 'sdk/src/schema.d.ts is stale: run `npm run sdk:generate` and commit the result').toBe(await generateSchema(doc));
    // Every path of the document is typed.
    for (const path of Object.keys(doc.paths as object)) expect(committed).toContain(`"${path}": {`);
  });
});
