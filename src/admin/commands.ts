// Operator commands (decisions.md "Operator command line"). Plain functions over the models, used
// by the command line (src/main/admin.ts) and by test and demo seeding.
import { Types } from 'mongoose';
import { issueApiKey, revokeApiKey } from '../auth/api-keys';
import { isObjectIdHex } from '../contracts/ids';
import { PROVIDERS, type ProviderName } from '../contracts/providers';
import type { SecretBox } from '../crypto/secret-box';
import { SCOPES, type Scope } from '../contracts/scopes';
import { ApiKey } from '../data/models/api-key';
import { CallTemplate, malformedPlaceholders, promptVariables } from '../data/models/call-template';
import { PhoneNumber } from '../data/models/phone-number';
import { Team } from '../data/models/team';
import { checkCredentials, credentialFields } from '../telephony/credentials';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import {
  CallingWindowError,
  describeCallingWindow,
  parseCallingHoursRule,
  validateCallingWindow,
  validateSkipDates,
  type CallingWindow,
} from '../calling-hours/calling-window';
import { MAX_CONCURRENT_CALLS, MAX_DIALS_PER_SECOND } from '../contracts/pacing';
import {
  describeRedialPolicy,
  MAX_REDIAL_SPACING_SECONDS,
  MAX_REDIALS,
  REDIAL_OUTCOMES,
  type RedialOutcome,
  type RedialPolicy,
} from '../contracts/redial';
import {
  MACHINE_DETECTION_MODES,
  MAX_VOICEMAIL_MESSAGE_LENGTH,
  type MachineDetectionMode,
} from '../contracts/machine-detection';
import { findVoice, VOICE_CATALOGUE } from '../voices/catalogue';
import { CommandError } from './command-error';
import { columnKey } from './csv';

// Exported here too: seeding, tests and benches import it from this module.
export { CommandError };

function teamObjectId(teamId: string): Types.ObjectId {
  if (!isObjectIdHex(teamId.toLowerCase()))
    throw new CommandError(`--team must be a 24-character hex id, got "${teamId}"`);
  return new Types.ObjectId(teamId);
}

export async function requireTeam(teamId: string) {
  const team = await Team.findById(teamObjectId(teamId)).lean();
  if (!team) throw new CommandError(`no team with id ${teamId}`);
  return team;
}

function requireProvider(value: string | undefined): ProviderName {
  if (!value || !(PROVIDERS as readonly string[]).includes(value))
    throw new CommandError(`--provider must be one of ${PROVIDERS.join(', ')}`);
  return value as ProviderName;
}

export function requireE164(value: string | undefined, flag: string): string {
  const parsed = value ? parsePhoneNumberFromString(value) : undefined;
  if (!parsed?.isValid()) throw new CommandError(`${flag} must be a valid E.164 phone number`);
  return parsed.number;
}

/** The longest `--expires-in`: ten years (much more is as good as never, and far more no valid date at all). */
export const MAX_KEY_LIFETIME_DAYS = 3650;

/** `90d`, `12h`, `30m`, `45s` -> milliseconds, from 1 s to MAX_KEY_LIFETIME_DAYS. */
export function parseExpiresIn(value: string): number {
  const ms = parseDuration(value, '--expires-in');
  if (ms < 1_000 || ms > MAX_KEY_LIFETIME_DAYS * 86_400_000)
    throw new CommandError(`--expires-in must be from 1s to ${MAX_KEY_LIFETIME_DAYS}d (ten years), got "${value}"`);
  return ms;
}

function parseDuration(value: string, flag: string): number {
  const match = /^(\d+)(d|h|m|s)$/.exec(value.trim());
  if (!match) throw new CommandError(`${flag} must look like 90d, 12h, 30m or 30s`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[match[2] as 'd' | 'h' | 'm' | 's'];
  // Digits beyond any sane duration make no safe integer: Infinity here, refused by the caller's range.
  return Number(match[1]) * unit;
}

/**
 * `--max-duration-seconds`: a whole number of seconds from 1 to 4 hours. Nothing else bounds it (the
 * model's default is 900); 0 or less would hang up every answered call at once. Short limits stay
 * possible for tests against the emulator (a 2-second call), so the floor is 1 s.
 */
export const MAX_DURATION_SECONDS_RANGE = { min: 1, max: 14_400 } as const;

function parseMaxDurationSeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const { min, max } = MAX_DURATION_SECONDS_RANGE;
  const seconds = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < min || seconds > max)
    throw new CommandError(`--max-duration-seconds must be a whole number from ${min} to ${max}, got "${value}"`);
  return seconds;
}

/** `--voice-id`: the id of a voice of the catalogue (src/voices/catalogue.json), as GET /v1/voices lists it. */
function parseVoiceId(value: string | undefined): number | null {
  if (value === undefined) return null;
  const voice = /^\s*\d+\s*$/.test(value) ? findVoice(Number(value)) : undefined;
  if (!voice)
    throw new CommandError(
      `--voice-id must be the id of a voice of GET /v1/voices (${VOICE_CATALOGUE.map((v) => v.id).join(', ')}), got "${value}"`,
    );
  return voice.id;
}

export async function createTeam(input: { name: string; provider?: string }) {
  if (!input.name?.trim()) throw new CommandError('--name is required');
  const team = await Team.create({
    name: input.name.trim(),
    defaultProvider: requireProvider(input.provider ?? 'twilio'),
  });
  return { teamId: team._id.toHexString() };
}

export async function listTeams() {
  const teams = await Team.find().sort({ createdAt: 1 }).lean();
  return {
    teams: teams.map((t) => ({
      teamId: t._id.toHexString(),
      name: t.name,
      defaultProvider: t.defaultProvider,
      // Unset values follow the service defaults (README, "Campaigns: pacing, calling hours, batch controls").
      limits: {
        maxConcurrentCalls: t.pacing?.maxConcurrentCalls ?? null,
        dialsPerSecond: Object.fromEntries(PROVIDERS.map((p) => [p, t.pacing?.dialsPerSecond?.[p] ?? null])),
      },
      providers: t.providerSettings.map((s) => ({
        provider: s.provider,
        fromNumbers: s.fromNumbers,
        hasCredentials: Boolean(s.credentialsSealed),
      })),
    })),
  };
}

/** Stores a provider's credentials (checked, then sealed) and optionally adds from-numbers for it. */
export async function setTeamProvider(
  input: { team: string; provider: string; credentials?: string; fromNumbers?: string[]; makeDefault?: boolean },
  secretBox: SecretBox,
) {
  const team = await requireTeam(input.team);
  const provider = requireProvider(input.provider);
  let sealed: string | undefined;
  if (input.credentials) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.credentials);
    } catch {
      throw new CommandError('--credentials must be a JSON object');
    }
    const checked = checkCredentials(provider, parsed, { strict: true });
    if ('problems' in checked)
      throw new CommandError(
        `--credentials for ${provider}: ${checked.problems.join('; ')} (it takes ${credentialFields(provider).join(', ')})`,
      );
    sealed = secretBox.seal(JSON.stringify(checked.credentials));
  }
  const numbers = (input.fromNumbers ?? []).map((n) => requireE164(n, '--from-number'));
  // Read, change, write back conditionally on the version read: no positional array operators
  // (FerretDB 1.x lacks them) and no lost update when two commands run at once.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = attempt === 0 ? team : await Team.findById(team._id).lean();
    if (!current) throw new CommandError(`no team with id ${input.team}`);
    const settings = current.providerSettings.map((s) => ({
      provider: s.provider,
      fromNumbers: [...s.fromNumbers],
      credentialsSealed: s.credentialsSealed,
    }));
    let entry = settings.find((s) => s.provider === provider);
    if (!entry) {
      entry = { provider, fromNumbers: [], credentialsSealed: undefined };
      settings.push(entry);
    }
    if (sealed) entry.credentialsSealed = sealed;
    for (const number of numbers) if (!entry.fromNumbers.includes(number)) entry.fromNumbers.push(number);
    const result = await Team.updateOne(
      { _id: current._id, updatedAt: current.updatedAt },
      { $set: { providerSettings: settings, ...(input.makeDefault ? { defaultProvider: provider } : {}) } },
    );
    if (result.matchedCount === 1) return { teamId: team._id.toHexString(), provider };
  }
  throw new CommandError('the team was changed concurrently; try again');
}

export async function createKey(input: { team: string; scopes?: string; expiresIn?: string; name?: string }) {
  const team = await requireTeam(input.team);
  let scopes: Scope[] | undefined;
  if (input.scopes !== undefined) {
    scopes = input.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean) as Scope[];
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length || scopes.length === 0)
      throw new CommandError(`--scopes must be a comma-separated list of ${SCOPES.join(', ')}`);
  }
  const expiresAt = input.expiresIn ? new Date(Date.now() + parseExpiresIn(input.expiresIn)) : null;
  return issueApiKey({ teamId: team._id.toHexString(), scopes, expiresAt, name: input.name });
}

export async function listKeys(input: { team: string }) {
  const team = await requireTeam(input.team);
  const keys = await ApiKey.find({ teamId: team._id }).sort({ createdAt: 1 }).lean();
  return {
    keys: keys.map((k) => ({
      keyId: k._id.toHexString(),
      name: k.name,
      scopes: k.scopes,
      expiresAt: k.expiresAt?.toISOString() ?? null,
      revoked: Boolean(k.revokedAt),
    })),
  };
}

export async function revokeKey(input: { keyId: string }) {
  if (!(await revokeApiKey(input.keyId))) throw new CommandError(`no key with id ${input.keyId}`);
  return { keyId: input.keyId, revoked: true };
}

export async function createTemplate(input: {
  team: string;
  name: string;
  prompt: string;
  requiredVariables?: string;
  tags?: string[];
  resultColumns?: string[];
  voiceId?: string;
  maxDurationSeconds?: string;
  timeZone?: string;
  callingHours?: string[];
  skipDates?: string[];
  redialOn?: string;
  redials?: string;
  redialSpacing?: string;
  machineDetection?: string;
  voicemailMessage?: string;
}) {
  const team = await requireTeam(input.team);
  const voiceId = parseVoiceId(input.voiceId);
  const maxDurationSeconds = parseMaxDurationSeconds(input.maxDurationSeconds);
  const redialPolicy = parseRedialPolicy(input);
  const machine = parseMachineDetection(input);
  if (!input.name?.trim()) throw new CommandError('--name is required');
  if (!input.prompt?.trim()) throw new CommandError('--prompt is required');
  refuseMalformedPlaceholders('--prompt', input.prompt);
  if (input.voicemailMessage) refuseMalformedPlaceholders('--voicemail-message', input.voicemailMessage);
  const variables = promptVariables(input.prompt);
  // A CSV import matches columns to variables by name, letter case, `_` and `-` aside: two variables
  // differing only so could never both be given from a file (and are likely one meant twice).
  const byColumn = new Map<string, string>();
  for (const name of variables) {
    const other = byColumn.get(columnKey(name));
    if (other)
      throw new CommandError(
        `--prompt uses {{${other}}} and {{${name}}}, which differ only in case or _: use one name`,
      );
    byColumn.set(columnKey(name), name);
  }
  const requiredVariables = (input.requiredVariables ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const missing = requiredVariables.filter((v) => !variables.includes(v));
  if (missing.length)
    throw new CommandError(`--required-variables names variables the prompt does not use: ${missing.join(', ')}`);
  const tags = new Map<string, string[]>();
  for (const tag of input.tags ?? []) {
    const eq = tag.indexOf('=');
    const name = eq > 0 ? tag.slice(0, eq).trim() : '';
    const phrase = eq > 0 ? tag.slice(eq + 1).trim() : '';
    // Spaces alone around the `=` are no name or phrase either (the template's schema refuses an empty name).
    if (!name || !phrase) throw new CommandError(`--tag must look like NAME=PHRASE, got "${tag}"`);
    tags.set(name, [...(tags.get(name) ?? []), phrase]);
  }
  const resultColumns = (input.resultColumns ?? []).map((column) => column.trim());
  if (resultColumns.some((column) => !column)) throw new CommandError('--result-column must name a column');
  if (input.timeZone) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: input.timeZone });
    } catch {
      throw new CommandError('--time-zone must be an IANA time zone such as Europe/Paris');
    }
  }
  let callingWindow: CallingWindow | null = null;
  if (input.callingHours?.length || input.skipDates?.length) {
    /** Runs a check of one option's values, its refusal naming that option. */
    const checked = <T>(option: string, check: () => T): T => {
      try {
        return check();
      } catch (err) {
        if (err instanceof CallingWindowError) throw new CommandError(`${option}: ${err.message}`);
        throw err;
      }
    };
    if (!input.callingHours?.length)
      throw new CommandError(
        '--skip-date needs --calling-hours, the hours to call in (any hour but those dates: --calling-hours "daily 00:00-24:00")',
      );
    const skipDates = input.skipDates ?? [];
    const rules = checked('--calling-hours', () => input.callingHours!.map(parseCallingHoursRule));
    checked('--skip-date', () => validateSkipDates(skipDates));
    callingWindow = checked('--calling-hours', () => validateCallingWindow({ rules, skipDates }));
  }
  const template = await CallTemplate.create({
    teamId: team._id,
    name: input.name.trim(),
    prompt: input.prompt,
    variables,
    requiredVariables,
    resultColumns,
    customTags: [...tags].map(([name, triggerPhrases]) => ({ name, triggerPhrases })),
    voiceId,
    maxDurationSeconds,
    timeZone: input.timeZone,
    callingWindow,
    redialPolicy,
    ...machine,
  });
  return { callTemplateId: template._id.toHexString() };
}

/** A prompt's text that looks like a placeholder but is not one is refused, naming it and the form. */
function refuseMalformedPlaceholders(option: string, text: string): void {
  const malformed = malformedPlaceholders(text);
  if (malformed.length)
    throw new CommandError(
      `${option} has ${malformed.map((m) => `"${m}"`).join(', ')}, which would be spoken as written: a variable is ` +
        '{{name}}, its name ASCII letters, digits and _ (not starting with a digit), e.g. {{firstName}} or {{first_name}}',
    );
}

/** `--machine-detection leaveMessage --voicemail-message "..."`; neither: detection off. */
function parseMachineDetection(input: { prompt: string; machineDetection?: string; voicemailMessage?: string }): {
  machineDetection: MachineDetectionMode;
  voicemailMessage: string | null;
} {
  const mode = input.machineDetection ?? 'off';
  if (!(MACHINE_DETECTION_MODES as readonly string[]).includes(mode))
    throw new CommandError(`--machine-detection must be one of ${MACHINE_DETECTION_MODES.join(', ')}`);
  const message = input.voicemailMessage?.trim() || null;
  if (mode === 'leaveMessage' && !message)
    throw new CommandError('--voicemail-message is required with --machine-detection leaveMessage');
  if (mode !== 'leaveMessage' && message)
    throw new CommandError('--voicemail-message needs --machine-detection leaveMessage');
  if (message && message.length > MAX_VOICEMAIL_MESSAGE_LENGTH)
    throw new CommandError(`--voicemail-message must be at most ${MAX_VOICEMAIL_MESSAGE_LENGTH} characters`);
  // The message is filled from the call's prompt variable values: it can only use the prompt's variables.
  const unknown = message
    ? promptVariables(message).filter((v) => !promptVariables(input.prompt ?? '').includes(v))
    : [];
  if (unknown.length)
    throw new CommandError(`--voicemail-message uses variables the prompt does not: ${unknown.join(', ')}`);
  return { machineDetection: mode as MachineDetectionMode, voicemailMessage: message };
}

/** `--redial-on busy,noAnswer --redials 2 --redial-spacing 1h`; none of them: one attempt per call. */
function parseRedialPolicy(input: {
  redialOn?: string;
  redials?: string;
  redialSpacing?: string;
}): RedialPolicy | null {
  if (input.redialOn === undefined && input.redials === undefined && input.redialSpacing === undefined) return null;
  const on = [
    ...new Set(
      (input.redialOn ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ];
  if (!on.length || on.some((v) => !(REDIAL_OUTCOMES as readonly string[]).includes(v)))
    throw new CommandError(`--redial-on must list some of ${REDIAL_OUTCOMES.join(', ')}`);
  const maxRedials = Number(input.redials);
  if (!Number.isInteger(maxRedials) || maxRedials < 1 || maxRedials > MAX_REDIALS)
    throw new CommandError(`--redials must be an integer from 1 to ${MAX_REDIALS}`);
  if (!input.redialSpacing) throw new CommandError('--redial-spacing is required with --redial-on (e.g. 1h, 30m)');
  const spacingSeconds = parseDuration(input.redialSpacing, '--redial-spacing') / 1000;
  if (spacingSeconds < 1 || spacingSeconds > MAX_REDIAL_SPACING_SECONDS)
    throw new CommandError('--redial-spacing must be from 1s to 7d');
  return { on: on as RedialOutcome[], maxRedials, spacingSeconds };
}

export async function listTemplates(input: { team: string }) {
  const team = await requireTeam(input.team);
  const templates = await CallTemplate.find({ teamId: team._id }).sort({ createdAt: 1 }).lean();
  return {
    templates: templates.map((t) => ({
      callTemplateId: t._id.toHexString(),
      name: t.name,
      variables: t.variables,
      requiredVariables: t.requiredVariables,
      resultColumns: t.resultColumns,
      customTags: t.customTags.map((tag) => tag.name),
      callingHours: t.callingWindow?.rules.length
        ? describeCallingWindow(t.callingWindow as CallingWindow)
        : 'any time',
      redial: t.redialPolicy ? describeRedialPolicy(t.redialPolicy as RedialPolicy) : 'never',
      machineDetection: t.machineDetection ?? 'off',
      ...(t.voicemailMessage ? { voicemailMessage: t.voicemailMessage } : {}),
    })),
  };
}

/** Registers a number the team owns; it also becomes a from-number of that provider. */
export async function createPhoneNumber(
  input: { team: string; number: string; provider: string },
  secretBox: SecretBox,
) {
  const team = await requireTeam(input.team);
  const provider = requireProvider(input.provider);
  const number = requireE164(input.number, '--number');
  const doc = await PhoneNumber.findOneAndUpdate(
    { teamId: team._id, number },
    { $setOnInsert: { teamId: team._id, number, provider } },
    { upsert: true, returnDocument: 'after' },
  ).lean();
  // Again for the same provider: the same number, unchanged. For another provider it would stay
  // registered for the first and become a from-number of both: refused.
  if (doc!.provider !== provider) throw new CommandError(`${number} is already registered for ${doc!.provider}`);
  await setTeamProvider({ team: input.team, provider, fromNumbers: [number] }, secretBox);
  return { phoneNumberId: doc!._id.toHexString() };
}

export async function listPhoneNumbers(input: { team: string }) {
  const team = await requireTeam(input.team);
  const numbers = await PhoneNumber.find({ teamId: team._id }).sort({ createdAt: 1 }).lean();
  return {
    phoneNumbers: numbers.map((n) => ({ phoneNumberId: n._id.toHexString(), number: n.number, provider: n.provider })),
  };
}

/** `twilio=1,vonage=3` -> per-provider numbers. */
/** `twilio=10,vonage=default`: a rate per provider, or `default` for the service's (unset). */
function parseDialsPerSecond(value: string): Partial<Record<ProviderName, number | 'default'>> {
  const out: Partial<Record<ProviderName, number | 'default'>> = {};
  for (const part of value.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\d+(?:\.\d+)?|default)\s*$/.exec(part);
    const provider = match?.[1];
    const rate = match?.[2] === 'default' ? 'default' : Number(match?.[2]);
    const rateValid = rate === 'default' || (rate > 0 && rate <= MAX_DIALS_PER_SECOND);
    if (!match || !(PROVIDERS as readonly string[]).includes(provider!) || !rateValid)
      throw new CommandError(
        `--dials-per-second must look like twilio=1,vonage=3,telnyx=30 (each above 0, at most ${MAX_DIALS_PER_SECOND}, or default); got "${part}"`,
      );
    out[provider as ProviderName] = rate;
  }
  return out;
}

/** Sets the team's pacing limits; the team's pacer reads them within 30 seconds. */
export async function setTeamLimits(input: { team: string; maxConcurrentCalls?: string; dialsPerSecond?: string }) {
  const team = await requireTeam(input.team);
  if (input.maxConcurrentCalls === undefined && input.dialsPerSecond === undefined)
    throw new CommandError('give --max-concurrent-calls and/or --dials-per-second');
  const set: Record<string, number> = {};
  // `default`: the limit is unset, and the service's default (PACING_*) applies again.
  const unset: Record<string, 1> = {};
  if (input.maxConcurrentCalls === 'default') unset['pacing.maxConcurrentCalls'] = 1;
  else if (input.maxConcurrentCalls !== undefined) {
    const cap = Number(input.maxConcurrentCalls);
    if (!Number.isInteger(cap) || cap < 1 || cap > MAX_CONCURRENT_CALLS)
      throw new CommandError(
        `--max-concurrent-calls must be a whole number from 1 to ${MAX_CONCURRENT_CALLS}, or default`,
      );
    set['pacing.maxConcurrentCalls'] = cap;
  }
  if (input.dialsPerSecond !== undefined) {
    for (const [provider, rate] of Object.entries(parseDialsPerSecond(input.dialsPerSecond))) {
      if (rate === 'default') unset[`pacing.dialsPerSecond.${provider}`] = 1;
      else set[`pacing.dialsPerSecond.${provider}`] = rate;
    }
  }
  // Dotted paths: one conditional-free single-document update, safe on FerretDB.
  await Team.updateOne({ _id: team._id }, { ...(Object.keys(set).length ? { $set: set } : {}), $unset: unset });
  const updated = await Team.findById(team._id, { pacing: 1 }).lean();
  return {
    teamId: team._id.toHexString(),
    limits: {
      maxConcurrentCalls: updated?.pacing?.maxConcurrentCalls ?? null,
      dialsPerSecond: Object.fromEntries(PROVIDERS.map((p) => [p, updated?.pacing?.dialsPerSecond?.[p] ?? null])),
    },
  };
}
