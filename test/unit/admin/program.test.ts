// The command line's surface: every command documents itself with --help, and the `oco` bin runs.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CommandError } from '../../../src/admin/commands';
import { createProgram, type CommandContext } from '../../../src/admin/program';

const unused = () => {
  throw new Error('help needs no configuration');
};
const context: CommandContext = {
  config: unused,
  secretBox: unused,
  database: unused,
  note: () => {},
  interactive: false,
  json: false,
};

function leaves(command: Command, trail: string[] = []): { path: string[]; command: Command }[] {
  const here = [...trail, command.name()];
  return command.commands.length
    ? command.commands.flatMap((child) => leaves(child, here))
    : [{ path: here.slice(1), command }];
}

describe('the operator command line', () => {
  const program = createProgram(context, () => {});
  const commands = leaves(program);

  it('has the commands of decisions.md and the operator work on calls and webhooks', () => {
    expect(commands.map((c) => c.path.join(' '))).toEqual(
      expect.arrayContaining([
        'team create',
        'key create',
        'key revoke',
        'template create',
        'phone-number create',
        'calls create',
        'calls list',
        'calls show',
        'calls watch',
        'calls cancel',
        'calls import',
        'transcripts show',
        'webhooks deliveries',
        'webhooks redeliver',
      ]),
    );
  });

  it('gives every command a description, --json and --help, and a description for each option', () => {
    for (const { path: words, command } of commands) {
      const help = command.helpInformation();
      expect(help, words.join(' ')).toContain(`Usage: oco ${words.join(' ')}`);
      expect(command.description(), words.join(' ')).not.toBe('');
      expect(help, words.join(' ')).toMatch(/--json\s+print the answer as one JSON object/);
      expect(help, words.join(' ')).toContain('-h, --help');
      for (const option of command.options)
        expect(option.description, `${words.join(' ')} ${option.flags}`).not.toBe('');
    }
  });

  it('runs as the `oco` bin, answering --help with exit code 0 and an unknown option with 2', async () => {
    const bin = path.resolve('bin/oco.cjs');
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [bin, ...args], (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const help = await run('webhooks', 'redeliver', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: oco webhooks redeliver \[options\] \[deliveryId\]/);
    // With --json the help is the answer: one JSON object on stdout (before, the help text itself).
    const jsonHelp = await run('webhooks', 'redeliver', '--help', '--json');
    expect(jsonHelp.code).toBe(0);
    expect((JSON.parse(jsonHelp.stdout) as { help: string }).help).toMatch(/^Usage: oco webhooks redeliver /);
    const wrong = await run('calls', 'list', '--colour', 'blue', '--json');
    expect(wrong.code).toBe(2);
    expect(JSON.parse(wrong.stdout)).toEqual({ error: "unknown option '--colour'" });
    expect(wrong.stderr).toBe('');
    // Three processes that compile TypeScript at start: seconds on a loaded 2-core machine.
  }, 45_000);

  it.each([
    [['team', 'create', '--name', '--json'], '--name'],
    [['team', 'create', '--name', 'Acme', '--provider', '--json'], '--provider'],
    [
      ['template', 'create', '--team', 'T', '--name', 'N', '--prompt', 'Hi', '--tag', 'a=b', '--tag', '--json'],
      '--tag',
    ],
    [['calls', 'list', '--status', '--json'], '--status'],
    [['calls', 'show', '--key', '--api-url', 'http://localhost:3000'], '--key'],
  ])('refuses an option whose value would be the next option: %j', async (argv, flag) => {
    // Fresh: commander keeps option values on the command objects between parses.
    const parsed = createProgram(context, () => {}).parseAsync(argv, { from: 'user' });
    // Refused before the command runs: the context's database() would throw another error.
    await expect(parsed).rejects.toBeInstanceOf(CommandError);
    await expect(parsed).rejects.toThrow(new RegExp(`^${flag} needs a value, got the option "--`));
  });

  it('takes a value that starts with dashes but is no option of the command', async () => {
    const seen: Record<string, unknown>[] = [];
    const program = createProgram(
      {
        ...context,
        database: async () => {
          throw new Error('stop here');
        },
      },
      () => {},
    );
    program.hook('preAction', (_p, command) => void seen.push(command.opts()));
    const parsed = program.parseAsync(['team', 'create', '--name', '--VIP--'], { from: 'user' });
    await expect(parsed).rejects.toThrow('stop here');
    expect(seen).toEqual([expect.objectContaining({ name: '--VIP--' })]);
  });

  it('points only to README sections that exist, in help texts and comments', () => {
    const headings = new Set(
      readFileSync('README.md', 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('#'))
        .map((line) => line.replace(/^#+\s*/, '').trim()),
    );
    const files = [...readdirSync('src/admin').map((name) => path.join('src/admin', name)), 'src/main/admin.ts'];
    const references = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/README[,:]?\s+"([^"]+)"/g)].map((m) => ({
        file,
        // A reference in a comment may run over two lines.
        section: m[1]!.replace(/\s*\/\/\s*|\s+/g, ' '),
      })),
    );
    expect(references.length).toBeGreaterThan(0);
    for (const { file, section } of references) expect(headings, `${file}: README "${section}"`).toContain(section);
  });
});
