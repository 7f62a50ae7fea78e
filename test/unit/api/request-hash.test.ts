// What an Idempotency-Key's record keeps of its body: the same hash as before for the same body (a
// retry within the 24 hours of a request stored by an earlier release must still match), and a hash
// for any body the parser took, however deep.
import { describe, expect, it } from 'vitest';
import { requestHashOf } from '../../../src/api/idempotency';

describe('requestHashOf', () => {
  it('hashes as the release before did, with keys in any order', () => {
    // Hashes taken with the recursive writer this one replaced.
    const body = {
      teamId: 'a',
      toPhoneNumber: '+14155552671',
      promptVariableValues: [
        { key: 'k', value: 'v' },
        { value: 'w', key: 'j' },
      ],
      record: true,
      n: 1.5,
      z: null,
      u: undefined,
    };
    expect(requestHashOf(body)).toBe('8a2fe7ba5d054beaff48ece8fc982411b5ed78276c5c5c2faa1f1e0916e6f7ee');
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(requestHashOf(reordered)).toBe(requestHashOf(body));
    expect(requestHashOf({ phoneCalls: [{ b: [1, [2, [3, {}]], []], a: 'é"\\' }, null], fileId: 'f' })).toBe(
      '20f1a5c860d6050eed260f7ee1468b7f380e9e2bcf587aeaacd63d2dd499f5e0',
    );
    expect(requestHashOf([])).toBe('4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
    expect(requestHashOf('text')).toBe('1e1d0f251d3a76fa2b1bfc81164078572623403887db02988b504b0492e9f076');
    // Arrays keep their order.
    expect(requestHashOf([1, 2])).not.toBe(requestHashOf([2, 1]));
  });

  it('hashes a body nested 100,000 deep, which JSON.parse takes', () => {
    const deep = JSON.parse(`{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(requestHashOf(deep)).toMatch(/^[0-9a-f]{64}$/);
    const deeper = JSON.parse(`{"x":${'['.repeat(100_001)}${']'.repeat(100_001)}}`);
    expect(requestHashOf(deeper)).not.toBe(requestHashOf(deep));
  });
});
