// Operator command line: `npm run -s admin -- <command> [options]`, or `oco <command>` once the
// package is installed (bin/oco.cjs). Commands and help: src/admin/program.ts; README, "Operator
// command line". With --json every command prints exactly one JSON object on stdout and nothing
// else, errors included ({"error": "..."}, and what the error adds: a failed `calls create` its
// `idempotencyKey`, a refused file every bad line as `problems`). Exit codes: 0 done, 2 refused
// input, 1 anything else.
// Each command's modules are loaded when it runs (src/admin/program.ts), mongoose and the Temporal
// client only by the commands that use them: most of an invocation's time was loading all of them.
import { CommanderError } from 'commander';
import type { Config } from '../config';
import { CommandError, errorDetails } from '../admin/command-error';
import { formatHuman } from '../admin/human-output';
import { createProgram } from '../admin/program';
import { connectDatabase, disconnectDatabase } from '../admin/servers';
import { createSecretBox, type SecretBox } from '../crypto/secret-box';
import { loadConfigWithLocalStack } from '../local/stack-settings';

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let config: Config | undefined;
  let secretBox: SecretBox | undefined;
  let connected = false;
  let result: object | undefined;
  const configOnce = () => (config ??= loadConfigWithLocalStack());

  const program = createProgram(
    {
      config: configOnce,
      secretBox: () =>
        (secretBox ??= createSecretBox(configOnce().ENCRYPTION_KEY, configOnce().ENCRYPTION_KEYS_PREVIOUS)),
      async database() {
        if (connected) return;
        // Unreachable: an error naming the server (never the URI's credentials), exit code 1.
        await connectDatabase(configOnce().MONGODB_URI, 2);
        connected = true;
      },
      note: (line) => process.stderr.write(`${line}\n`),
      interactive: process.stderr.isTTY === true,
      json,
    },
    (answer) => {
      result = answer;
    },
  );

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    // --help ends the program through this path too, with exit code 0 (its text the answer under --json).
    if (err instanceof CommanderError && err.exitCode === 0) {
      if (json && result) process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    const message =
      err instanceof CommanderError
        ? (helpOfUnknown(err, argv) ?? err.message.replace(/^error: /, ''))
        : err instanceof Error
          ? err.message
          : String(err);
    if (json) process.stdout.write(`${JSON.stringify({ error: message, ...errorDetails(err) })}\n`);
    else if (!(err instanceof CommanderError)) process.stderr.write(`${message}\n`);
    return err instanceof CommandError || err instanceof CommanderError ? 2 : 1;
  } finally {
    if (connected) await disconnectDatabase();
  }
  if (result === undefined) {
    // A group without its command (`oco calls`): its help, as a refused input.
    return 2;
  }
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${formatHuman(result)}\n`);
  return 0;
}

/**
 * `help nosuch`: commander prints the program's help as an error, its message a marker
 * ("(outputHelp)"); said as `team explode` is.
 */
function helpOfUnknown(err: CommanderError, argv: string[]): string | undefined {
  if (err.code !== 'commander.help') return undefined;
  const words = argv.slice(argv.indexOf('help') + 1).filter((word) => !word.startsWith('-'));
  return `unknown command '${words.join(' ')}'`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
