// The opening line and voicemail message filled from a call's prompt variable values.
import { describe, expect, it } from 'vitest';
import { fillPrompt } from '../../../src/data/models/call-template';

const values = (entries: Record<string, string>) => Object.entries(entries).map(([key, value]) => ({ key, value }));

describe('fillPrompt', () => {
  it('fills each variable, spaces inside the braces or not', () => {
    expect(fillPrompt('Hello {{firstName}}, this is {{ agent }}.', values({ firstName: 'Ada', agent: 'Bo' }))).toBe(
      'Hello Ada, this is Bo.',
    );
  });

  it.each([
    ['Hello {{firstName}}, this is Bright Dental.', 'Hello, this is Bright Dental.'],
    ['Hi {{title}} {{lastName}}, how are you?', 'Hi, how are you?'],
    ['Thanks {{firstName}}!', 'Thanks!'],
    ['{{firstName}}, your check-up is due.', 'your check-up is due.'],
    ['We have your order {{orderNumber}} ready.', 'We have your order ready.'],
    ['Hello {{firstName}}', 'Hello'],
    ['Thanks, {{name}}!', 'Thanks!'],
    ['Hello {{a}}, {{b}}, welcome', 'Hello, welcome'],
    ['{{a}}. Hello', 'Hello'],
    ['Line one.\n{{firstName}}, thanks for your time.', 'Line one.\nthanks for your time.'],
    ['Hello {{firstName}}\nNext line', 'Hello\nNext line'],
    ['re{{x}}fund', 'refund'],
  ])('leaves out a variable without a value, and the space around it: %j', (prompt, line) => {
    expect(fillPrompt(prompt, [])).toBe(line);
  });

  it('treats an empty or blank value as none, and keeps the spacing of the rest as written', () => {
    expect(fillPrompt('Hello {{firstName}}, we  saved {{n}} seats.', values({ firstName: '', n: '2' }))).toBe(
      'Hello, we  saved 2 seats.',
    );
    expect(fillPrompt('Hello {{firstName}}!', values({ firstName: '   ' }))).toBe('Hello!');
  });

  it('stays linear in the line with many gaps and long values', () => {
    const prompt = Array.from({ length: 5_000 }, (_, i) => `word {{v${i % 2}}} `).join('');
    const began = performance.now();
    const line = fillPrompt(prompt, values({ v1: 'x'.repeat(200) }));
    expect(line.startsWith('word word xxx')).toBe(true);
    expect(performance.now() - began).toBeLessThan(2_000);
  });
});
