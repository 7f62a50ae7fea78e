// The typed client is only as true as its types: they must be what the document says today.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, renderApiTypes } from '../../../scripts/api-types';

describe('the generated API types', () => {
  it('match the OpenAPI document the server builds (run `npm run api-types` after changing it)', async () => {
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    expect(
      committed === (await renderApiTypes()),
      'src/client/api-types.generated.ts is stale: npm run api-types',
    ).toBe(true);
  });
});
