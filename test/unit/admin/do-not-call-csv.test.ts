import { describe, expect, it } from 'vitest';
import { readDncCsv } from '../../../src/admin/do-not-call-commands';
import { CommandError } from '../../../src/admin/commands';
import { errorDetails } from '../../../src/admin/command-error';

describe('readDncCsv', () => {
  it('reads the number and reason columns of a file with a header, whatever their place and spelling', () => {
    const csv = 'id,REASON,phone_number\n1,moved away,+442079460000\n2,,+14155550160\n';
    expect(readDncCsv(csv, { reason: 'default' })).toEqual([
      { phoneNumber: '+442079460000', reason: 'moved away' },
      { phoneNumber: '+14155550160', reason: 'default' },
    ]);
  });

  it('reads a file without a header as number, then reason; national numbers need a default country', () => {
    expect(readDncCsv('+14155550161\n(415) 555-0162,no more calls\n', { defaultCountry: 'US' })).toEqual([
      { phoneNumber: '+14155550161' },
      { phoneNumber: '+14155550162', reason: 'no more calls' },
    ]);
    expect(() => readDncCsv('+14155550161\n(415) 555-0162\n', {})).toThrow(
      /line 2: "\(415\) 555-0162" is not a valid phone number/,
    );
    // Lines of the file, blank ones and a reason spanning two lines counted.
    expect(() => readDncCsv('+14155550161,"two\nlines"\n\n(415) 555-0162\n', {})).toThrow(
      /line 4: "\(415\) 555-0162" is not a valid phone number/,
    );
  });

  it('refuses a file with no number column, no rows or broken quoting, as a command error', () => {
    for (const csv of ['name,reason\nAda,x\n', '', 'phone\n"+1415555016']) {
      expect(() => readDncCsv(csv, {})).toThrow(CommandError);
    }
  });

  it('says 20 bad lines and how many more there are, and gives every one for the JSON form', () => {
    const csv = ['phone', ...Array.from({ length: 25 }, (_, i) => `bad${i}`)].join('\n');
    const refusal = (() => {
      try {
        readDncCsv(csv, {});
        return null;
      } catch (err) {
        return err as Error;
      }
    })();
    const message = refusal?.message ?? '';
    expect(message).toMatch(/^nothing imported: 25 line\(s\) without a valid number/);
    expect(message.match(/^line /gm)).toHaveLength(20);
    expect(message).toMatch(/\.\.\. and 5 more \(--json lists every one as "problems"\)$/);
    const { problems } = errorDetails(refusal) as { problems: string[] };
    expect(problems).toHaveLength(25);
    expect(problems.at(-1)).toMatch(/^line 26: "bad24" is not a valid phone number/);
  });
});
