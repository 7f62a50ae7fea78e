// What a body the JSON parser refused although it is JSON is answered with: named, and small whatever
// was sent.
import { describe, expect, it } from 'vitest';
import { refusedJsonProblems } from '../../../src/api/validation';

describe('refusedJsonProblems', () => {
  it('names a __proto__ key where it is, and a body that is not an object', () => {
    expect(refusedJsonProblems('{"a":[{"__proto__":{}}]}')).toEqual(['a.0.__proto__ is not allowed']);
    expect(refusedJsonProblems('null')).toEqual(['body must be an object']);
  });

  it('keeps the answer small for long keys nested deep: each segment and the depth are cut', () => {
    const long = 'k'.repeat(10_000);
    let body = `[${Array.from({ length: 10 }, () => '{"__proto__":0}').join(',')}]`;
    for (let depth = 0; depth < 20; depth += 1) body = `{"${long}${depth}":${body}}`;
    const problems = refusedJsonProblems(body);
    expect(problems).toHaveLength(10);
    expect(problems.join('').length).toBeLessThan(10_000);
    expect(body.length).toBeGreaterThan(200_000);
  });
});
