import { describe, expect, it } from 'vitest';
import { checkCallCsv, readCallCsv, refuseBadLines } from '../../../src/admin/call-import';
import { CommandError } from '../../../src/admin/commands';

const TEAM = '665f1c2e8b3e4a0012345678';
const TEMPLATE = {
  id: '665f1c2e8b3e4a0012345679',
  variables: ['firstName', 'clinic'],
  requiredVariables: ['firstName'],
};

describe('readCallCsv', () => {
  it('maps call fields and the template variables from the header, whatever their spelling and order', () => {
    const csv = [
      'First Name,phone,Name,record,provider,scheduled_for,Clinic,time zone,email',
      'Ada,(415) 555-0101,"Lovelace, Ada",yes,vonage,2027-01-05T15:00:00.000Z,North,America/New_York,ada@example.com',
      'Grace,+14155550102,,,,,,,',
    ].join('\n');
    expect(readCallCsv(csv, { teamId: TEAM, template: TEMPLATE, defaultCountry: 'US' })).toEqual([
      {
        line: 2,
        element: {
          teamId: TEAM,
          callTemplateId: TEMPLATE.id,
          toPhoneNumber: '+14155550101',
          nameOfHuman: 'Lovelace, Ada',
          record: true,
          telephonyProvider: 'vonage',
          callDelayedUntil: '2027-01-05T15:00:00.000Z',
          calleeTimeZone: 'America/New_York',
          toEmailAddress: 'ada@example.com',
          promptVariableValues: [
            { key: 'firstName', value: 'Ada' },
            { key: 'clinic', value: 'North' },
          ],
        },
      },
      {
        line: 3,
        element: {
          teamId: TEAM,
          callTemplateId: TEMPLATE.id,
          toPhoneNumber: '+14155550102',
          promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
        },
      },
    ]);
  });

  it('reports every bad line with its number and creates nothing', () => {
    const csv = [
      'phone,firstName,record,provider',
      '+14155550101,Ada,true,twilio',
      '(415) 555-0102,Bo,true,twilio',
      '+14155550103,,true,twilio',
      '+14155550104,Cy,maybe,sip',
    ].join('\n');
    let message = '';
    try {
      readCallCsv(csv, { teamId: TEAM, template: TEMPLATE });
    } catch (err) {
      expect(err).toBeInstanceOf(CommandError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/nothing imported: 3 bad line\(s\)/);
    // A national number with no --default-country to read it by: the message says what would.
    expect(message).toMatch(
      /line 3: toPhoneNumber must be a valid E\.164 phone number \(a number without \+country code needs --default-country\)\n/,
    );
    expect(message).toMatch(/line 4: missing required variable\(s\) firstName/);
    // With a country given, a number too short for it gets no such hint.
    expect(() =>
      readCallCsv('phone,firstName\n(415) 555-01,Ada\n', { teamId: TEAM, template: TEMPLATE, defaultCountry: 'US' }),
    ).toThrow(/line 2: toPhoneNumber must be a valid E\.164 phone number$/);
    expect(message).toMatch(/line 5: record must be true or false, not "maybe"; telephonyProvider must be one of/);
    expect(message).not.toMatch(/line 2/);
  });

  it('refuses a number with an extension as the API does, national or international: the call would ring the switchboard', () => {
    const csv = ['phone,firstName', '+1 415 555 0101 ext. 12,Ada', '(415) 555-0102 x7,Bo', '+14155550103,Cy'].join(
      '\n',
    );
    expect(() => readCallCsv(csv, { teamId: TEAM, template: TEMPLATE, defaultCountry: 'US' })).toThrow(
      /nothing imported: 2 bad line\(s\)[\s\S]*line 2: toPhoneNumber must be a valid E\.164 phone number, without an extension[\s\S]*line 3: toPhoneNumber must be a valid E\.164 phone number, without an extension/,
    );
  });

  // Blank lines are skipped and a quoted cell may span lines, so a row's line is not its index + 2.
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ])('names the line a bad row starts on, past blank lines and multi-line cells (%s)', (_, eol) => {
    const csv = [
      'phone,firstName,clinic',
      '+14155550101,Ada,"North',
      'Wing"',
      '',
      '+14155550102,Bo,South',
      '(415) 555-0103,"Cy',
      'Dee",East',
      '   ',
      '+14155550104,,West',
    ].join(eol);
    expect(() => readCallCsv(csv, { teamId: TEAM, template: TEMPLATE })).toThrow(
      /2 bad line\(s\):\nline 6: toPhoneNumber must be a valid E\.164 phone number \(a number without \+country code needs --default-country\)\nline 9: missing required variable/,
    );
    const good = readCallCsv(csv.split(eol).slice(0, 5).join(eol), { teamId: TEAM, template: TEMPLATE });
    expect(good.map((row) => row.line)).toEqual([2, 5]);
  });

  it('refuses an unknown column (a typo must not become a silent empty variable) and a file without numbers', () => {
    expect(() => readCallCsv('phone,frstName\n+14155550101,Ada\n', { teamId: TEAM, template: TEMPLATE })).toThrow(
      /column "frstName" is neither a call field .* nor a variable of the template \(firstName, clinic\)/,
    );
    expect(() => readCallCsv('firstName\nAda\n', { teamId: TEAM, template: TEMPLATE })).toThrow(
      /no phone number column/,
    );
    expect(() => readCallCsv('phone,firstName\n', { teamId: TEAM, template: TEMPLATE })).toThrow(/at least one call/);
  });
});

describe('checkCallCsv columns', () => {
  it("takes a column named like a call field as the template's variable when the template has one", () => {
    // A template saying {{name}} and {{email}}: those columns fill them (before, they became nameOfHuman
    // and toEmailAddress, and the variables were left empty: "Hello, this is Ada").
    const template = { id: TEMPLATE.id, variables: ['name', 'email'], requiredVariables: ['name'] };
    const csv = ['phone,Name,email', '+14155550101,Grace,grace@example.com'].join('\n');
    expect(readCallCsv(csv, { teamId: TEAM, template })).toEqual([
      {
        line: 2,
        element: {
          teamId: TEAM,
          callTemplateId: TEMPLATE.id,
          toPhoneNumber: '+14155550101',
          promptVariableValues: [
            { key: 'name', value: 'Grace' },
            { key: 'email', value: 'grace@example.com' },
          ],
        },
      },
    ]);
  });

  it('refuses two columns for one field or one variable: the last would win unseen', () => {
    const twoNumbers = ['phone,number,firstName', '+14155550101,+14155550102,Ada'].join('\n');
    expect(() => readCallCsv(twoNumbers, { teamId: TEAM, template: TEMPLATE })).toThrow(
      new CommandError('columns "phone" and "number" are both the call field toPhoneNumber: keep one'),
    );
    const twoNames = ['phone,First Name,first_name', '+14155550101,Ada,Ada'].join('\n');
    expect(() => readCallCsv(twoNames, { teamId: TEAM, template: TEMPLATE })).toThrow(
      new CommandError('columns "First Name" and "first_name" are both the variable firstName: keep one'),
    );
  });
});

describe('refuseBadLines', () => {
  const csv = [
    'phone,firstName',
    '+14155550101,Ada',
    'not a number,Bo',
    '+14155550103,',
    '+14155550104,Dee',
    '+14155550101,Ada again',
  ].join('\n');

  it('names the lines that did not parse and those whose number is on the do-not-call list, in one error', () => {
    const checked = checkCallCsv(csv, { teamId: TEAM, template: TEMPLATE });
    expect(checked.calls.map((c) => c.line)).toEqual([2, 5, 6]);
    expect(checked.problems.map((p) => p.line)).toEqual([3, 4]);
    expect(() => refuseBadLines(checked, new Set(['+14155550101']))).toThrow(
      new RegExp(
        '^nothing imported: 2 bad line\\(s\\) and 1 number\\(s\\) on the do-not-call list:\\n' +
          "line 2: \\+14155550101 is on the team's do-not-call list\\n" +
          'line 3: toPhoneNumber must be a valid E\\.164 phone number\\n' +
          'line 4: missing required variable\\(s\\) firstName\\n' +
          "line 6: \\+14155550101 is on the team's do-not-call list$",
      ),
    );
  });

  it('keeps each headline when only one kind of line is bad, and passes a good file', () => {
    const listedOnly = checkCallCsv('phone,firstName\n+14155550101,Ada\n+14155550102,Bo\n', {
      teamId: TEAM,
      template: TEMPLATE,
    });
    expect(() => refuseBadLines(listedOnly, new Set(['+14155550102']))).toThrow(
      /^nothing imported: 1 number\(s\) on the do-not-call list:\nline 3: /,
    );
    expect(() => refuseBadLines(checkCallCsv(csv, { teamId: TEAM, template: TEMPLATE }), new Set())).toThrow(
      /^nothing imported: 2 bad line\(s\):\nline 3: .*\nline 4: [^\n]*$/,
    );
    expect(() => refuseBadLines(listedOnly, new Set())).not.toThrow();
  });

  it('once chunks of the file exist, says so, and that an edited file would be another import', () => {
    const checked = checkCallCsv(csv, { teamId: TEAM, template: TEMPLATE });
    expect(() => refuseBadLines(checked, new Set(), { created: 2, of: 5 })).toThrow(
      /^nothing more imported \(an earlier run created 2 of its 5 batches; mend what is named without editing the file, which would be another import, its calls created again\): 2 bad line\(s\):\nline 3: /,
    );
  });
});

describe('cells a row has beyond the header, and rows of empty cells', () => {
  it('names a row with more cells than the header (an unquoted comma), but takes empty trailing cells', () => {
    const csv = ['phone,clinic,firstName', '+14155550101,Acme, Inc.,Ada', '+14155550102,North,Bo,,', ''].join('\n');
    const checked = checkCallCsv(csv, { teamId: TEAM, template: TEMPLATE });
    expect(checked.problems).toEqual([
      {
        line: 2,
        problem: '4 cells where the header has 3 (a comma in a value needs the value in double quotes)',
      },
    ]);
    expect(checked.calls.map((c) => [c.line, c.element.promptVariableValues])).toEqual([
      [
        3,
        [
          { key: 'clinic', value: 'North' },
          { key: 'firstName', value: 'Bo' },
        ],
      ],
    ]);
  });

  it('skips rows of empty cells (",,," below a spreadsheet\'s data), keeping the lines of the others', () => {
    const csv = ['phone,firstName', '+14155550101,Ada', ',', ' , ', '+14155550102,Bo', ',,', ',\r\n'].join('\n');
    const checked = checkCallCsv(csv, { teamId: TEAM, template: TEMPLATE });
    expect(checked.problems).toEqual([]);
    expect(checked.calls.map((c) => [c.line, c.element.toPhoneNumber])).toEqual([
      [2, '+14155550101'],
      [5, '+14155550102'],
    ]);
  });
});
