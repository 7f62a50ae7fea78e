import { describe, expect, it } from 'vitest';
import { formatHuman } from '../../../src/admin/human-output';

describe('formatHuman', () => {
  it('prints fields as lines, array items indented below their key, objects as JSON', () => {
    const text = formatHuman({
      status: 'completed',
      callDuration: 36,
      nextCursor: null,
      statusExtraInfo: { statusCode: 'completed' },
      resultValues: [{ columnName: 'interested', value: 'yes' }, 'two'],
    });
    expect(text.split('\n')).toEqual([
      'status: completed',
      'callDuration: 36',
      'nextCursor: null',
      'statusExtraInfo: {"statusCode":"completed"}',
      'resultValues:',
      '  {"columnName":"interested","value":"yes"}',
      '  "two"',
    ]);
  });

  it('prints an empty array as [] on its key line, so the next field is not read as its item', () => {
    expect(formatHuman({ phoneCallWebhooks: [], createdAt: '2026-12-02T11:00:26.127Z' }).split('\n')).toEqual([
      'phoneCallWebhooks: []',
      'createdAt: 2026-12-02T11:00:26.127Z',
    ]);
  });
});
