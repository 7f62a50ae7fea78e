// Operator command line: `npm run -s admin -- <command> [options]` (see README, "Operator command line").
// With --json every command prints exactly one JSON object on stdout and nothing else.
import { parseArgs } from 'node:util';
import mongoose from 'mongoose';
import {
  CommandError,
  createKey,
  createPhoneNumber,
  createTeam,
  createTemplate,
  listKeys,
  listPhoneNumbers,
  listTeams,
  listTemplates,
  revokeKey,
  setTeamLimits,
  setTeamProvider,
} from '../admin/commands';
import { createSecretBox } from '../crypto/secret-box';
import { connectMongo } from '../data/connection';
import { loadConfigWithLocalStack } from '../local/stack-settings';
import { provisionEmulatorAccounts } from '../admin/emulator-accounts';
import { isBatchAction, runBatchCommand } from '../admin/batch-commands';
import { isDncVerb, runDncCommand } from '../admin/do-not-call-commands';
import { resealSecrets } from '../admin/reseal-secrets';
import { importCalls } from '../admin/call-import';
import { isCallVerb, runCallCommand, showTranscript } from '../admin/call-commands';
import { listWebhookDeliveries } from '../admin/webhook-commands';

const USAGE = `usage: npm run -s admin -- <command> [options] [--json]
  team create --name NAME [--provider twilio|vonage|telnyx]
  team list
  team set-provider --team TEAM_ID --provider P [--credentials JSON] [--from-number E164]... [--default]
  team set-limits --team TEAM_ID [--max-concurrent-calls N] [--dials-per-second twilio=1,vonage=3,telnyx=30]
  key create --team TEAM_ID [--scopes s1,s2] [--expires-in 90d|1h|30s] [--name NAME]
  key list --team TEAM_ID
  key revoke --key-id KEY_ID
  template create --team TEAM_ID --name NAME --prompt TEXT [--required-variables a,b]
                  [--tag NAME=PHRASE]... [--result-column NAME]... [--voice-id N]
                  [--max-duration-seconds N] [--time-zone IANA]
                  [--calling-hours "Mon-Fri 09:00-20:00"]... [--skip-date YYYY-MM-DD]...
                  [--redial-on busy,noAnswer,providerError --redials N --redial-spacing 1h]
                  [--machine-detection off|hangUp|leaveMessage [--voicemail-message TEXT]]
  template list --team TEAM_ID
  phone-number create --team TEAM_ID --number E164 --provider P
  phone-number list --team TEAM_ID
  batch pause|resume|cancel --team TEAM_ID (--batch-id BATCH_ID | --file-id FILE_ID)
  calls list [--status S] [--to E164] [--file-id F] [--template TEMPLATE_ID] [--limit N] [--cursor C]
  calls show|watch|cancel --id CALL_ID [--interval 1]     (watch: each status change until the end)
  transcripts show --call CALL_ID
  webhooks deliveries --team TEAM_ID --call CALL_ID      (every event to the call's endpoints, each attempt)
      (calls and transcripts go through the API: --key API_KEY or OCO_API_KEY, --api-url URL or PUBLIC_BASE_URL)
  calls import --team TEAM_ID --template TEMPLATE_ID --file FILE.csv [--default-country US]
               [--key API_KEY (or OCO_API_KEY)] [--api-url URL] [--batch-size 1000]
  dnc import --team TEAM_ID --file FILE.csv [--reason TEXT] [--default-country US]
  dnc add --team TEAM_ID --number E164 [--reason TEXT]
  dnc remove --team TEAM_ID --number E164
  dnc list --team TEAM_ID [--limit N]
  secrets reseal     (after rotating ENCRYPTION_KEY: seals every stored secret under the new key)`;

const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  name: { type: 'string' },
  provider: { type: 'string' },
  team: { type: 'string' },
  scopes: { type: 'string' },
  'expires-in': { type: 'string' },
  'key-id': { type: 'string' },
  prompt: { type: 'string' },
  'required-variables': { type: 'string' },
  tag: { type: 'string', multiple: true },
  'result-column': { type: 'string', multiple: true },
  'voice-id': { type: 'string' },
  'max-duration-seconds': { type: 'string' },
  'time-zone': { type: 'string' },
  number: { type: 'string' },
  credentials: { type: 'string' },
  'from-number': { type: 'string', multiple: true },
  default: { type: 'boolean' },
  'max-concurrent-calls': { type: 'string' },
  'dials-per-second': { type: 'string' },
  'calling-hours': { type: 'string', multiple: true },
  'skip-date': { type: 'string', multiple: true },
  'batch-id': { type: 'string' },
  'file-id': { type: 'string' },
  file: { type: 'string' },
  reason: { type: 'string' },
  'default-country': { type: 'string' },
  limit: { type: 'string' },
  'redial-on': { type: 'string' },
  redials: { type: 'string' },
  'redial-spacing': { type: 'string' },
  'machine-detection': { type: 'string' },
  template: { type: 'string' },
  key: { type: 'string' },
  'api-url': { type: 'string' },
  'batch-size': { type: 'string' },
  id: { type: 'string' },
  status: { type: 'string' },
  to: { type: 'string' },
  cursor: { type: 'string' },
  interval: { type: 'string' },
  call: { type: 'string' },
  'voicemail-message': { type: 'string' },
} as const;

const note = (line: string) => process.stderr.write(`${line}\n`);

function need(value: string | undefined, flag: string): string {
  if (!value) throw new CommandError(`${flag} is required`);
  return value;
}

async function run(argv: string[]): Promise<object> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [noun, verb] = positionals;
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  if (values.help || !noun) throw new CommandError(USAGE);
  const config = loadConfigWithLocalStack();
  const secretBox = createSecretBox(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_PREVIOUS);
  await connectMongo(config.MONGODB_URI, 2);
  try {
    if (noun === 'batch' && isBatchAction(verb)) {
      return await runBatchCommand(
        { action: verb, team: need(values.team, '--team'), batchId: values['batch-id'], fileId: values['file-id'] },
        config,
      );
    }
    const target = { apiUrl: values['api-url'] ?? config.PUBLIC_BASE_URL, key: values.key ?? process.env.OCO_API_KEY };
    if (noun === 'calls' && isCallVerb(verb)) {
      return await runCallCommand(verb, target, {
        id: values.id,
        status: values.status,
        to: values.to,
        fileId: values['file-id'],
        template: values.template,
        limit: values.limit,
        cursor: values.cursor,
        interval: values.interval,
        onChange: note,
      });
    }
    if (command === 'transcripts show') return await showTranscript(target, values.call);
    if (command === 'webhooks deliveries')
      return await listWebhookDeliveries({ team: need(values.team, '--team'), call: values.call });
    if (noun === 'dnc' && isDncVerb(verb)) {
      return await runDncCommand(verb, {
        team: need(values.team, '--team'),
        file: values.file,
        number: values.number,
        reason: values.reason,
        defaultCountry: values['default-country'],
        limit: values.limit,
      });
    }
    switch (command) {
      case 'calls import':
        return await importCalls({
          team: need(values.team, '--team'),
          template: need(values.template, '--template'),
          file: need(values.file, '--file'),
          apiUrl: target.apiUrl,
          key: target.key,
          defaultCountry: values['default-country'],
          batchSize: values['batch-size'],
          progress: process.stderr.isTTY === true,
        });
      case 'team create': {
        const created = await createTeam({ name: need(values.name, '--name'), provider: values.provider });
        const { provisioned, unreachable } = await provisionEmulatorAccounts(created.teamId, config, secretBox);
        // stderr: with --json, stdout carries exactly the documented object.
        if (provisioned.length) note(`Provider emulator accounts and from-numbers set for ${provisioned.join(', ')}.`);
        for (const { provider, url, reason } of unreachable) {
          note(
            `No ${provider} credentials set: ${url} is not a real provider's API and did not answer as the emulator (${reason}). ` +
              'Use team set-provider.',
          );
        }
        return created;
      }
      case 'team list':
        return await listTeams();
      case 'team set-provider':
        return await setTeamProvider(
          {
            team: need(values.team, '--team'),
            provider: need(values.provider, '--provider'),
            credentials: values.credentials,
            fromNumbers: values['from-number'],
            makeDefault: values.default,
          },
          secretBox,
        );
      case 'team set-limits':
        return await setTeamLimits({
          team: need(values.team, '--team'),
          maxConcurrentCalls: values['max-concurrent-calls'],
          dialsPerSecond: values['dials-per-second'],
        });
      case 'key create':
        return await createKey({
          team: need(values.team, '--team'),
          scopes: values.scopes,
          expiresIn: values['expires-in'],
          name: values.name,
        });
      case 'key list':
        return await listKeys({ team: need(values.team, '--team') });
      case 'key revoke':
        return await revokeKey({ keyId: need(values['key-id'], '--key-id') });
      case 'template create':
        return await createTemplate({
          team: need(values.team, '--team'),
          name: need(values.name, '--name'),
          prompt: need(values.prompt, '--prompt'),
          requiredVariables: values['required-variables'],
          tags: values.tag,
          resultColumns: values['result-column'],
          voiceId: values['voice-id'],
          maxDurationSeconds: values['max-duration-seconds'],
          timeZone: values['time-zone'],
          callingHours: values['calling-hours'],
          skipDates: values['skip-date'],
          redialOn: values['redial-on'],
          redials: values.redials,
          redialSpacing: values['redial-spacing'],
          machineDetection: values['machine-detection'],
          voicemailMessage: values['voicemail-message'],
        });
      case 'template list':
        return await listTemplates({ team: need(values.team, '--team') });
      case 'phone-number create':
        return await createPhoneNumber(
          {
            team: need(values.team, '--team'),
            number: need(values.number, '--number'),
            provider: need(values.provider, '--provider'),
          },
          secretBox,
        );
      case 'phone-number list':
        return await listPhoneNumbers({ team: need(values.team, '--team') });
      case 'secrets reseal':
        return await resealSecrets(secretBox);
      default:
        throw new CommandError(`unknown command "${command}"\n${USAGE}`);
    }
  } finally {
    await mongoose.disconnect();
  }
}

const argv = process.argv.slice(2);
const json = argv.includes('--json');
run(argv).then(
  (result) => {
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${formatHuman(result)}\n`);
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`${message}\n`);
    process.exitCode =
      err instanceof CommandError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  },
);

function formatHuman(result: object): string {
  return Object.entries(result)
    .map(([key, value]) =>
      Array.isArray(value)
        ? `${key}:\n${value.map((v) => `  ${JSON.stringify(v)}`).join('\n')}`
        : `${key}: ${value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    )
    .join('\n');
}
