// The access log's path: a recording's or voice sample's token never in it, however the router was
// asked for the file (it matches paths whatever their case, with or without a trailing slash).
import { describe, expect, it } from 'vitest';
import { loggedPath } from '../../../src/api/request-context';

const token = 'Abc_def-0123456789abcdefghijklmn';

describe('loggedPath', () => {
  it.each([
    [`/recordings/${token}.wav`, '/recordings/:file'],
    [`/Recordings/${token}.wav/`, '/recordings/:file/'],
    [`/RECORDINGS/${token}.WAV`, '/recordings/:file'],
    [`/voices/${token}/sample.wav`, '/voices/:token/sample.wav'],
    [`/Voices/${token}/Sample.wav/`, '/voices/:token/Sample.wav/'],
  ])('writes %s as %s', (path, logged) => {
    expect(loggedPath(path)).toBe(logged);
    expect(loggedPath(path)).not.toContain(token);
  });

  it('leaves every other path as it is', () => {
    for (const path of ['/v1/phoneCalls/65a1b2c3d4e5f60718293a4b', '/v1/voices', '/voices', '/readyz', '/recordings'])
      expect(loggedPath(path)).toBe(path);
  });
});
