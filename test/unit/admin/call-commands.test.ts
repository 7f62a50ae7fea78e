// The call commands refuse what they can tell is wrong before asking the API: a missing call id
// (naming the command that was run) and an API URL that is no URL (refused input, exit code 2).
import { describe, expect, it } from 'vitest';
import { cancelCall, listCalls, showCall, showTranscript, watchCall } from '../../../src/admin/call-commands';
import { importCalls } from '../../../src/admin/call-import';
import { CommandError } from '../../../src/admin/commands';

// Nothing listens on port 1: were a request sent, the error would be another one.
const target = { apiUrl: 'http://127.0.0.1:1', key: 'oco_x_y' };

describe('the call commands', () => {
  it.each([
    ['calls show', () => showCall(target, undefined)],
    ['calls cancel', () => cancelCall(target, undefined)],
    ['calls watch', () => watchCall(target, undefined, { onChange: () => {} })],
    ['transcripts show', () => showTranscript(target, undefined)],
  ])('without a call id, %s names itself in the hint', async (command, run) => {
    const refused = await run().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(CommandError);
    expect((refused as Error).message).toBe(`the call id is required (${command} CALL_ID)`);
  });

  it.each(['notaurl', 'ftp://127.0.0.1/', 'localhost:3000'])('refuses the API URL %s as input', async (apiUrl) => {
    const refused = await listCalls({ apiUrl, key: 'oco_x_y' }, {}).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(CommandError);
    expect((refused as Error).message).toMatch(
      /^--api-url \(or PUBLIC_BASE_URL\) must be an http:\/\/ or https:\/\/ URL/,
    );
  });

  it('refuses a malformed API URL for calls import before reading anything', async () => {
    const refused = importCalls({
      team: '0123456789abcdef01234567',
      template: '0123456789abcdef01234568',
      file: 'calls.csv',
      apiUrl: 'notaurl',
      key: 'oco_x_y',
      progress: false,
    });
    await expect(refused).rejects.toBeInstanceOf(CommandError);
  });
});
