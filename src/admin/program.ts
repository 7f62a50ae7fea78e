// The operator command line's commands, options and help (commander). Each command hands back one
// object; src/main/admin.ts prints it (`--json`: exactly that object as one line of JSON) and sets
// the exit code. Setup commands work on the database (decisions.md "Operator command line"); the
// work on calls and webhooks goes through the API with the team's key, as an integrator's would.
import { Command } from 'commander';
import type { Config } from '../config';
import { BATCH_ACTIONS, MAX_BATCH } from '../contracts/batches';
import { MACHINE_DETECTION_MODES } from '../contracts/machine-detection';
import { PROVIDERS } from '../contracts/providers';
import { REDIAL_OUTCOMES } from '../contracts/redial';
import { SCOPES } from '../contracts/scopes';
import type { SecretBox } from '../crypto/secret-box';
import { credentialFields } from '../telephony/credentials';
import type { ApiTarget } from './api-target';
import { CommandError } from './command-error';
import type { DncVerb } from './do-not-call-commands';

// Each command's module is loaded when the command runs, not here: an invocation then loads only what
// its own command needs (mongoose for the database, the Temporal client for `batch`, the API client
// for the API), which is most of a start's time. `require`, typed as the module: bin/oco.cjs registers
// tsx for CommonJS only, where an `import()` of a TypeScript file fails.
/* eslint-disable @typescript-eslint/no-require-imports -- loaded on use, as said above */
const load = {
  commands: () => require('./commands') as typeof import('./commands'),
  callCommands: () => require('./call-commands') as typeof import('./call-commands'),
  callImport: () => require('./call-import') as typeof import('./call-import'),
  batchCommands: () => require('./batch-commands') as typeof import('./batch-commands'),
  dncCommands: () => require('./do-not-call-commands') as typeof import('./do-not-call-commands'),
  emulatorAccounts: () => require('./emulator-accounts') as typeof import('./emulator-accounts'),
  resealSecrets: () => require('./reseal-secrets') as typeof import('./reseal-secrets'),
  webhookCommands: () => require('./webhook-commands') as typeof import('./webhook-commands'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** What the commands need from around them, each made on first use. */
export interface CommandContext {
  config(): Config;
  secretBox(): SecretBox;
  /** Connects to MongoDB (once); the runner disconnects at the end. */
  database(): Promise<void>;
  /** Progress and notes for a person: stderr, so that stdout carries only the answer. */
  note(line: string): void;
  /** Whether stderr is a terminal (a progress bar is drawn only there). */
  interactive: boolean;
  /** `--json` given: commander's own error lines are left out, the runner prints the error (or help) as JSON. */
  json: boolean;
}

type Options = Record<string, string | string[] | boolean | undefined>;
type Handler = (options: Options, args: (string | undefined)[]) => Promise<object>;

const collect = (value: string, previous: string[] = []) => [...previous, value];
/** The option most commands take, worded once. */
const TEAM_OPTION = ['--team <teamId>', 'the team (required)'] as const;

/**
 * Refuses an option value that is one of the command's own options (`--name --json`), naming the
 * option that lacks its value. Other values starting with dashes (`--prompt '--- Hi'`) are values.
 */
function refuseOptionsAsValues(command: Command): void {
  const known = new Set<string>();
  for (let at: Command | null = command; at; at = at.parent) {
    for (const option of at.options) if (option.long) known.add(option.long);
  }
  known.add('--help');
  for (const option of command.options) {
    if (option.isBoolean()) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    const given = (Array.isArray(value) ? value : [value]).find(
      (v): v is string => typeof v === 'string' && known.has(v.split('=')[0]!),
    );
    if (given !== undefined)
      throw new CommandError(`${option.long ?? option.flags} needs a value, got the option "${given}" instead`);
  }
}

function need(value: unknown, flag: string): string {
  if (typeof value !== 'string' || !value) throw new CommandError(`${flag} is required`);
  return value;
}
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);
const list = (value: unknown) => (Array.isArray(value) ? (value as string[]) : undefined);

/**
 * Builds the program. `onResult` receives the one object a command answers; errors are thrown
 * (commander's own as CommanderError, ours as CommandError).
 */
export function createProgram(context: CommandContext, onResult: (result: object) => void): Command {
  const program = new Command('oco')
    .description(
      'Operator command line of the outbound call orchestrator. Also run as `npm run -s admin -- <command>`.\n' +
        'Every command takes --json: exactly one JSON object on stdout and nothing else.',
    )
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  // Set before the commands are added: they copy these settings when made.
  // With --json, help is the answer too: one JSON object on stdout, `{"help": "..."}`.
  if (context.json)
    program.configureOutput({
      outputError: () => {},
      writeErr: () => {},
      writeOut: (text) => onResult({ help: text.trimEnd() }),
    });
  // Every option that takes a value, in one place: commander takes the word after `--name` as its
  // value even when it is the next option (`team create --name --json` would name the team "--json").
  program.hook('preAction', (_program, command) => refuseOptionsAsValues(command));

  /** A command that answers one object; `--json` on each, so it reads well after the command. */
  function leaf(parent: Command, name: string, description: string, handler: Handler, args: string[] = []): Command {
    const command = parent
      .command(name)
      .description(description)
      .option('--json', 'print the answer as one JSON object');
    for (const arg of args) command.argument(arg);
    command.action(async (...received: unknown[]) => {
      const options = received[args.length] as Options;
      onResult(await handler(options, received.slice(0, args.length) as (string | undefined)[]));
    });
    return command;
  }
  const withApi = (command: Command) =>
    command
      .option('--key <key>', "the team's API key (default: OCO_API_KEY)")
      .option('--api-url <url>', 'the API base URL (default: PUBLIC_BASE_URL)');
  const apiTarget = (options: Options): ApiTarget => ({
    // PUBLIC_BASE_URL read as it is: an operator holding only a key needs neither MONGODB_URI nor
    // ENCRYPTION_KEY, which the service's whole configuration would ask for.
    apiUrl: str(options.apiUrl) ?? (process.env.PUBLIC_BASE_URL || context.config().PUBLIC_BASE_URL),
    key: str(options.key) ?? process.env.OCO_API_KEY,
  });
  const onDatabase =
    (handler: Handler): Handler =>
    async (options, args) => {
      await context.database();
      return handler(options, args);
    };

  // ----------------------------------------------------------------------------------- team
  const team = program.command('team').description('teams, their providers and pacing limits');
  leaf(
    team,
    'create',
    'create a team (emulator provider accounts are provisioned when the emulator answers)',
    onDatabase(async (o) => {
      const created = await load.commands().createTeam({ name: need(o.name, '--name'), provider: str(o.provider) });
      const { provisioned, unreachable } = await load
        .emulatorAccounts()
        .provisionEmulatorAccounts(created.teamId, context.config(), context.secretBox());
      if (provisioned.length)
        context.note(`Provider emulator accounts and from-numbers set for ${provisioned.join(', ')}.`);
      for (const { provider, url, reason } of unreachable) {
        context.note(
          `No ${provider} credentials set: ${url} is not a real provider's API and did not answer as the emulator (${reason}). ` +
            'Use team set-provider.',
        );
      }
      return created;
    }),
  )
    .option('--name <name>', 'the team name (required)')
    .option('--provider <provider>', `default telephony provider, one of ${PROVIDERS.join(', ')} (default: twilio)`);
  leaf(
    team,
    'list',
    'every team with its providers and limits',
    onDatabase(() => load.commands().listTeams()),
  );
  leaf(
    team,
    'set-provider',
    "store a provider's credentials (sealed) and add from-numbers",
    onDatabase((o) =>
      load.commands().setTeamProvider(
        {
          team: need(o.team, '--team'),
          provider: need(o.provider, '--provider'),
          credentials: str(o.credentials),
          fromNumbers: list(o.fromNumber),
          makeDefault: o.default === true,
        },
        context.secretBox(),
      ),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--provider <provider>', `one of ${PROVIDERS.join(', ')} (required)`)
    .option(
      '--credentials <json>',
      `the provider's credentials as a JSON object: ${PROVIDERS.map((p) => `${p}: ${credentialFields(p).join(', ')}`).join('; ')}`,
    )
    .option('--from-number <e164>', 'a number to call from (repeatable)', collect)
    .option('--default', "make it the team's default provider");
  leaf(
    team,
    'set-limits',
    'pacing: concurrent calls and dials per second per provider',
    onDatabase((o) =>
      load.commands().setTeamLimits({
        team: need(o.team, '--team'),
        maxConcurrentCalls: str(o.maxConcurrentCalls),
        dialsPerSecond: str(o.dialsPerSecond),
      }),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--max-concurrent-calls <n>', 'calls live at once (default: back to the service default)')
    .option(
      '--dials-per-second <rates>',
      'per provider, e.g. twilio=1,vonage=3,telnyx=30 (a provider=default: back to the service default)',
    );

  // ------------------------------------------------------------------------------------ key
  const key = program.command('key').description('API keys');
  leaf(
    key,
    'create',
    'issue an API key (shown once)',
    onDatabase((o) =>
      load.commands().createKey({
        team: need(o.team, '--team'),
        scopes: str(o.scopes),
        expiresIn: str(o.expiresIn),
        name: str(o.name),
      }),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--scopes <scopes>', `comma-separated, of ${SCOPES.join(', ')} (default: all)`)
    .option('--expires-in <duration>', 'e.g. 90d, 1h, 30s (default: never)')
    .option('--name <name>', 'a label for the key');
  leaf(
    key,
    'list',
    "a team's keys (never their secrets)",
    onDatabase((o) => load.commands().listKeys({ team: need(o.team, '--team') })),
  ).option(...TEAM_OPTION);
  leaf(
    key,
    'revoke',
    'revoke a key',
    onDatabase((o) => load.commands().revokeKey({ keyId: need(o.keyId, '--key-id') })),
  ).option('--key-id <keyId>', 'the key (required)');

  // ------------------------------------------------------------------------------- template
  const template = program.command('template').description('call templates');
  leaf(
    template,
    'create',
    'create a call template; the prompt marks variables as {{name}}',
    onDatabase((o) =>
      load.commands().createTemplate({
        team: need(o.team, '--team'),
        name: need(o.name, '--name'),
        prompt: need(o.prompt, '--prompt'),
        requiredVariables: str(o.requiredVariables),
        tags: list(o.tag),
        resultColumns: list(o.resultColumn),
        voiceId: str(o.voiceId),
        maxDurationSeconds: str(o.maxDurationSeconds),
        timeZone: str(o.timeZone),
        callingHours: list(o.callingHours),
        skipDates: list(o.skipDate),
        redialOn: str(o.redialOn),
        redials: str(o.redials),
        redialSpacing: str(o.redialSpacing),
        machineDetection: str(o.machineDetection),
        voicemailMessage: str(o.voicemailMessage),
      }),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--name <name>', 'the template name (required)')
    .option('--prompt <text>', "the agent's prompt, e.g. 'Hello {{firstName}}' (required)")
    .option('--required-variables <names>', 'comma-separated variables every call must give')
    .option('--tag <name=phrase>', 'a custom tag and a phrase that triggers it (repeatable)', collect)
    .option('--result-column <name>', 'a result the call should find out (repeatable)', collect)
    .option('--voice-id <n>', 'a voice of GET /v1/voices')
    .option('--max-duration-seconds <n>', 'hang up after this long')
    .option('--time-zone <iana>', "the template's time zone, e.g. Europe/Paris")
    .option('--calling-hours <rule>', 'e.g. "Mon-Fri 09:00-20:00" (repeatable)', collect)
    .option('--skip-date <yyyy-mm-dd>', 'a day never to call (repeatable)', collect)
    .option('--redial-on <outcomes>', `comma-separated, of ${REDIAL_OUTCOMES.join(', ')}`)
    .option('--redials <n>', 'how many redials at most')
    .option('--redial-spacing <duration>', 'time between dials, e.g. 1h, 30m')
    .option('--machine-detection <mode>', `one of ${MACHINE_DETECTION_MODES.join(', ')} (default: off)`)
    .option('--voicemail-message <text>', 'what to leave on a machine (with leaveMessage)');
  leaf(
    template,
    'list',
    "a team's templates",
    onDatabase((o) => load.commands().listTemplates({ team: need(o.team, '--team') })),
  ).option(...TEAM_OPTION);

  // --------------------------------------------------------------------------- phone-number
  const phoneNumber = program.command('phone-number').description("the team's own numbers to call from");
  leaf(
    phoneNumber,
    'create',
    'register a number the team owns (it becomes a from-number of its provider)',
    onDatabase((o) =>
      load.commands().createPhoneNumber(
        {
          team: need(o.team, '--team'),
          number: need(o.number, '--number'),
          provider: need(o.provider, '--provider'),
        },
        context.secretBox(),
      ),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--number <e164>', 'the number (required)')
    .option('--provider <provider>', `one of ${PROVIDERS.join(', ')} (required)`);
  leaf(
    phoneNumber,
    'list',
    "a team's numbers",
    onDatabase((o) => load.commands().listPhoneNumbers({ team: need(o.team, '--team') })),
  ).option(...TEAM_OPTION);

  // ---------------------------------------------------------------------------------- batch
  const batch = program.command('batch').description('pause, resume or cancel the queued calls of a batch or file');
  for (const action of BATCH_ACTIONS) {
    leaf(
      batch,
      action,
      `${action} the queued calls of a batch or of a file`,
      onDatabase((o) =>
        load
          .batchCommands()
          .runBatchCommand(
            { action, team: need(o.team, '--team'), batchId: str(o.batchId), fileId: str(o.fileId) },
            context.config(),
          ),
      ),
    )
      .option(...TEAM_OPTION)
      .option('--batch-id <batchId>', 'the batchId of a batch create answer')
      .option('--file-id <fileId>', 'the fileId the calls were created with');
  }

  // ---------------------------------------------------------------------------------- calls
  const calls = program.command('calls').description("a team's calls, through the API (--key or OCO_API_KEY)");
  withApi(
    leaf(calls, 'create', 'queue one call', (o) =>
      load.callCommands().createCall(apiTarget(o), {
        team: need(o.team, '--team'),
        template: need(o.template, '--template'),
        to: need(o.to, '--to'),
        variables: list(o.var),
        at: str(o.at),
        record: o.record === true,
        provider: str(o.provider),
        name: str(o.name),
        email: str(o.email),
        timeZone: str(o.timeZone),
        phoneNumberId: str(o.phoneNumberId),
        idempotencyKey: str(o.idempotencyKey),
      }),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--template <callTemplateId>', 'the call template (required)')
    .option('--to <e164>', 'the number to call (required)')
    .option('--var <name=value>', 'a prompt variable value (repeatable)', collect)
    .option('--at <iso-date-time>', 'call no earlier than this (callDelayedUntil)')
    .option('--record', 'record the call')
    .option('--provider <provider>', `one of ${PROVIDERS.join(', ')} (default: the team's)`)
    .option('--name <name>', 'the name of the person called')
    .option('--email <address>', 'their e-mail address')
    .option('--time-zone <iana>', "the callee's time zone, for calling hours and spoken meeting times")
    .option('--phone-number-id <id>', 'a registered number to call from')
    .option('--idempotency-key <key>', 'makes running the same create again safe (default: a new one, printed)');
  withApi(
    leaf(calls, 'list', 'a page of calls, newest first (filters as the API)', (o) =>
      load.callCommands().listCalls(apiTarget(o), {
        status: str(o.status),
        to: str(o.to),
        fileId: str(o.fileId),
        template: str(o.template),
        phoneNumberId: str(o.phoneNumberId),
        createdAfter: str(o.createdAfter),
        createdBefore: str(o.createdBefore),
        limit: str(o.limit),
        cursor: str(o.cursor),
      }),
    ),
  )
    .option('--status <status>', 'only calls in this status')
    .option('--to <e164>', 'only calls to this number')
    .option('--file-id <fileId>', 'only calls of this file')
    .option('--template <callTemplateId>', 'only calls of this template')
    .option('--phone-number-id <id>', 'only calls from this registered number')
    .option('--created-after <iso>', 'only calls created after this time (ISO 8601)')
    .option('--created-before <iso>', 'only calls created before this time (ISO 8601)')
    .option('--limit <n>', 'page size')
    .option('--cursor <cursor>', 'the nextCursor of the page before');
  const callId = (o: Options, args: (string | undefined)[]) => args[0] ?? str(o.id);
  withApi(
    leaf(calls, 'show', 'one call in full', (o, a) => load.callCommands().showCall(apiTarget(o), callId(o, a)), [
      '[callId]',
    ]),
  ).option('--id <callId>', 'the call (or as the argument)');
  withApi(
    leaf(
      calls,
      'watch',
      'print each status change of a call until it ends, then the call ({deleted, call} if it is deleted meanwhile)',
      (o, a) =>
        load
          .callCommands()
          .watchCall(apiTarget(o), callId(o, a), { interval: str(o.interval), onChange: context.note }),
      ['[callId]'],
    ),
  )
    .option('--id <callId>', 'the call (or as the argument)')
    .option('--interval <seconds>', 'how often to look', '1');
  withApi(
    leaf(
      calls,
      'cancel',
      'cancel a queued call',
      (o, a) => load.callCommands().cancelCall(apiTarget(o), callId(o, a)),
      ['[callId]'],
    ),
  ).option('--id <callId>', 'the call (or as the argument)');
  withApi(
    leaf(
      calls,
      'import',
      'queue the calls of a CSV file: every line checked first, then sent in batches (safe to run again)',
      onDatabase((o) =>
        load.callImport().importCalls({
          team: need(o.team, '--team'),
          template: need(o.template, '--template'),
          file: need(o.file, '--file'),
          ...apiTarget(o),
          defaultCountry: str(o.defaultCountry),
          batchSize: str(o.batchSize),
          again: o.again === true,
          progress: context.interactive,
        }),
      ),
    ),
  )
    .option(...TEAM_OPTION)
    .option('--template <callTemplateId>', 'the call template (required)')
    .option(
      '--file <path>',
      'the CSV file (required; a relative path from where the command is run); README "Operator command line" lists its columns',
    )
    .option('--default-country <cc>', 'for numbers written without +country, e.g. US')
    .option('--batch-size <n>', `calls per API batch, at most ${MAX_BATCH}`, '1000')
    .option(
      '--again',
      "create the calls of a file imported more than 24 hours ago again (refused without it: that import's keys are forgotten)",
    );

  // ---------------------------------------------------------------------------- transcripts
  const transcripts = program.command('transcripts').description("calls' transcripts, through the API");
  withApi(
    leaf(
      transcripts,
      'show',
      'every utterance of a call, in spoken order',
      (o, a) => load.callCommands().showTranscript(apiTarget(o), a[0] ?? str(o.call)),
      ['[callId]'],
    ),
  ).option('--call <callId>', 'the call (or as the argument)');

  // ------------------------------------------------------------------------------- webhooks
  const webhooks = program
    .command('webhooks')
    .description("what the team's webhook endpoints were sent, through the API");
  withApi(
    leaf(
      webhooks,
      'deliveries',
      "every event sent to a call's webhook endpoints, with each attempt",
      (o, a) => load.webhookCommands().listWebhookDeliveries(apiTarget(o), a[0] ?? str(o.call)),
      ['[callId]'],
    ),
  ).option('--call <callId>', 'the call (or as the argument)');
  withApi(
    leaf(
      webhooks,
      'redeliver',
      'send one delivered, failed or gone event again (same webhook-id) to its endpoint as configured now',
      (o, a) => load.webhookCommands().redeliverWebhook(apiTarget(o), a[0] ?? str(o.delivery)),
      ['[deliveryId]'],
    ),
  ).option('--delivery <deliveryId>', 'the deliveryId of `webhooks deliveries` (or as the argument)');

  // ------------------------------------------------------------------------------------ dnc
  const dnc = program.command('dnc').description("the team's do-not-call list");
  const dncLeaf = (verb: DncVerb, description: string) =>
    leaf(
      dnc,
      verb,
      description,
      onDatabase((o) =>
        load.dncCommands().runDncCommand(verb, {
          team: need(o.team, '--team'),
          file: str(o.file),
          number: str(o.number),
          reason: str(o.reason),
          defaultCountry: str(o.defaultCountry),
          limit: str(o.limit),
          cursor: str(o.cursor),
        }),
      ),
    ).option(...TEAM_OPTION);
  dncLeaf('import', 'list every number of a CSV file')
    .option('--file <path>', 'the CSV file (required; a relative path from where the command is run)')
    .option('--reason <text>', 'why')
    .option('--default-country <cc>', 'for numbers written without +country');
  dncLeaf('add', 'list one number').option('--number <e164>', 'the number (required)').option('--reason <text>', 'why');
  dncLeaf('remove', 'take a number off the list').option('--number <e164>', 'the number (required)');
  dncLeaf('list', 'the newest entries')
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .option('--cursor <c>', 'the nextCursor of the previous page: the entries after it');

  // -------------------------------------------------------------------------------- secrets
  const secrets = program.command('secrets').description('stored secrets');
  leaf(
    secrets,
    'reseal',
    'after rotating ENCRYPTION_KEY: seal every stored secret under the new key',
    onDatabase(async () => {
      const { liveCallsNote, resealSecrets, unreadableNote } = load.resealSecrets();
      const counts = await resealSecrets(context.secretBox());
      if (counts.phoneCalls.live) context.note(liveCallsNote(counts.phoneCalls.live));
      const unreadable = unreadableNote(counts);
      if (unreadable) context.note(unreadable);
      return counts;
    }),
  );

  return program;
}
