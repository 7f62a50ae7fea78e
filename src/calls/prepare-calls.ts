// Turns validated create requests into PhoneCall documents: checks what needs the database
// (template, phone number, prompt variables, the do-not-call list), picks defaults (provider,
// from-number) and collects every problem, prefixed per batch element, before anything is written.
import { Types } from 'mongoose';
import { checkCallingWindow, type CallingWindow } from '../calling-hours/calling-window';
import { timeZonesOfNumber } from '../calling-hours/callee-time-zones';
import type { PhoneCallCreateInput } from '../schemas/phone-calls';
import type { ProviderName } from '../contracts/providers';
import type { ActiveMachineDetection } from '../contracts/machine-detection';
import type { RedialPolicy } from '../contracts/redial';
import type { SecretBox } from '../crypto/secret-box';
import { CallTemplate, fillPrompt, type CallTemplateDoc } from '../data/models/call-template';
import { telnyxSpeechProblem } from '../telephony/telnyx';
import { twilioSpeechProblem } from '../telephony/twilio';
import { vonageSpeechProblem } from '../telephony/vonage';
import { listedAmong } from '../data/do-not-call-store';
import type { CallOrigin } from '../data/models/phone-call';
import { PhoneNumber, type PhoneNumberDoc } from '../data/models/phone-number';
import type { TeamDoc } from '../data/models/team';
import { readTeam } from '../data/team-reads';
import { mapBounded } from '../concurrency/run-bounded';
import { readTogether } from '../concurrency/send-together';

export interface PreparedCall {
  doc: Record<string, unknown> & { _id: Types.ObjectId };
  plan: DialPlan;
}

/** What a call's workflow takes from its template besides the call itself. */
export interface DialPlan {
  maxDurationSeconds: number;
  callingWindow: CallingWindow | null;
  redialPolicy: RedialPolicy | null;
  machineDetection: ActiveMachineDetection | null;
}

/** The template fields a dial plan is made of (dialPlanFor reads just these). */
export const DIAL_PLAN_FIELDS = {
  maxDurationSeconds: 1,
  callingWindow: 1,
  redialPolicy: 1,
  machineDetection: 1,
} as const;

export function dialPlanOf(
  template: Pick<CallTemplateDoc, keyof typeof DIAL_PLAN_FIELDS> | null | undefined,
): DialPlan {
  const window = template?.callingWindow;
  const redial = template?.redialPolicy;
  const detection = template?.machineDetection;
  return {
    maxDurationSeconds: template?.maxDurationSeconds ?? 900,
    machineDetection: detection === 'hangUp' || detection === 'leaveMessage' ? detection : null,
    redialPolicy: redial
      ? {
          on: [...redial.on] as RedialPolicy['on'],
          maxRedials: redial.maxRedials,
          spacingSeconds: redial.spacingSeconds,
        }
      : null,
    callingWindow:
      window && window.rules.length
        ? {
            rules: window.rules.map((r) => ({
              days: [...r.days] as CallingWindow['rules'][number]['days'],
              start: r.start,
              end: r.end,
            })),
            skipDates: [...window.skipDates],
          }
        : null,
  };
}

export interface PrepareOptions {
  teamId: string;
  /** The team, when the caller has just read it (the API key's check does): saves a read per create. */
  team?: TeamDoc;
  origin: CallOrigin;
  fileId?: string;
  fileName?: string;
  /** Seals the calls' own webhook secrets (absent: checks only, as `calls import` makes of a file first). */
  secretBox?: SecretBox;
  dispatchBatchId: Types.ObjectId;
}

/** Up to this many distinct ids, a batch reads them one by one (a few at a time); beyond, at once. */
const READ_ONE_BY_ONE_UP_TO = 64;

/**
 * A reader of a team's documents of `model` by id: `read(teamId, ids)`, by `_id` equality, one id per
 * read: FerretDB 1.x pushes an `_id` equality down to its PostgreSQL index, but not `$in`, with which
 * each read went through every document of the team. A batch naming more ids than that is rare; it
 * reads them with one `$in`. Concurrent creates naming the same document (a client's burst of calls
 * of one template) share its read (readTogether); they only read what it answers.
 */
function ownByIdsReader<T>(model: { find(filter: Record<string, unknown>): { lean(): PromiseLike<unknown[]> } }) {
  const readOne = readTogether(async (key) => {
    const [teamId, id] = key.split(':');
    return (await model.find({ _id: id, teamId }).lean()) as T[];
  });
  return async (teamId: Types.ObjectId, ids: readonly string[]): Promise<T[]> => {
    if (ids.length > READ_ONE_BY_ONE_UP_TO) return (await model.find({ _id: { $in: ids }, teamId }).lean()) as T[];
    const found = await mapBounded(ids, 8, (id) => readOne(`${teamId.toHexString()}:${id}`));
    return found.flat();
  };
}

const templatesOfTeam = ownByIdsReader<CallTemplateDoc>(CallTemplate);
const numbersOfTeam = ownByIdsReader<PhoneNumberDoc>(PhoneNumber);

/**
 * What each provider speaks, and why it would refuse: the opening line (Twilio's TwiML, Vonage's talk
 * action; Telnyx speaks none) and the voicemail message (Twilio's TwiML, Vonage's talk, Telnyx's speak).
 */
const SPEECH_CHECKS: Record<
  ProviderName,
  { opening?: (text: string) => string | null; message: (text: string) => string | null }
> = {
  twilio: { opening: (text) => twilioSpeechProblem(text), message: (text) => twilioSpeechProblem(text, true) },
  vonage: { opening: vonageSpeechProblem, message: vonageSpeechProblem },
  telnyx: { message: telnyxSpeechProblem },
};

/** What the call's provider would refuse to speak of its filled prompt or voicemail message. */
function speechProblems(
  provider: ProviderName,
  template: Pick<CallTemplateDoc, 'prompt' | 'voicemailMessage' | 'machineDetection'>,
  input: PhoneCallCreateInput,
  field: (name: string) => string,
): string[] {
  const values = input.promptVariableValues ?? [];
  const checks = SPEECH_CHECKS[provider];
  const problems: string[] = [];
  const opening = checks.opening?.(fillPrompt(template.prompt, values));
  if (opening) problems.push(`${field('promptVariableValues')} with the call template's prompt ${opening}`);
  if (template.machineDetection === 'leaveMessage') {
    const message = checks.message(fillPrompt(template.voicemailMessage ?? template.prompt, values));
    if (message)
      problems.push(`${field('promptVariableValues')} with the call template's voicemail message ${message}`);
  }
  return problems;
}

/** Returns the documents, or the list of problems (each naming its field). */
export async function prepareCalls(
  inputs: ReadonlyArray<{ input: PhoneCallCreateInput; prefix: string }>,
  options: PrepareOptions,
): Promise<{ calls: PreparedCall[]; problems: string[] }> {
  const team = options.team ?? (await readTeam(options.teamId));
  if (!team) return { calls: [], problems: ['teamId does not name an existing team'] };
  const templateIds = [...new Set(inputs.map(({ input }) => input.callTemplateId))];
  const numberIds = [...new Set(inputs.flatMap(({ input }) => (input.phoneNumberId ? [input.phoneNumberId] : [])))];
  const [templates, numbers, doNotCall] = await Promise.all([
    templatesOfTeam(team._id, templateIds),
    numbersOfTeam(team._id, numberIds),
    listedAmong(
      options.teamId,
      inputs.map(({ input }) => input.toPhoneNumber),
    ),
  ]);
  const templateById = new Map(templates.map((t) => [t._id.toHexString(), t]));
  const numberById = new Map(numbers.map((n) => [n._id.toHexString(), n]));

  const problems: string[] = [];
  const calls: PreparedCall[] = [];
  // Zones per number and the window check per template and zone set: a batch repeats both a lot.
  const zonesByNumber = new Map<string, Promise<string[]>>();
  const neverOpens = new Map<string, boolean>();
  const now = Date.now();
  for (const { input, prefix } of inputs) {
    const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
    const found: string[] = [];
    if (doNotCall.has(input.toPhoneNumber))
      found.push(`${field('toPhoneNumber')} ${input.toPhoneNumber} is on the team's do-not-call list`);
    const template = templateById.get(input.callTemplateId);
    if (!template) found.push(`${field('callTemplateId')} does not name a call template of this team`);
    const number = input.phoneNumberId ? numberById.get(input.phoneNumberId) : undefined;
    if (input.phoneNumberId && !number)
      found.push(`${field('phoneNumberId')} does not name a phone number of this team`);
    // Appended one by one: a spread of a list that long (a body with thousands of unknown variables)
    // would overflow the call stack.
    if (template)
      for (const problem of checkVariables(template, input, field('promptVariableValues'))) found.push(problem);
    // decisions.md: the provider defaults to the team's setting; the number behind phoneNumberId is
    // the from-number when it belongs to that provider.
    const provider = (input.telephonyProvider ?? team.defaultProvider) as ProviderName;
    if (!team.providerSettings.some((s) => s.provider === provider && s.credentialsSealed)) {
      found.push(
        `${field('telephonyProvider')} ${provider} has no credentials for this team (an operator sets them with team set-provider)`,
      );
    }
    const from = input.fromPhoneNumber ?? defaultFromNumber(team, provider, number);
    if (!from) found.push(`${field('fromPhoneNumber')} is required: the team has no ${provider} number to call from`);
    const plan = dialPlanOf(template);
    if (template) found.push(...speechProblems(provider, template, input, field));
    let zones: string[] = [];
    if (template && plan.callingWindow) {
      if (input.calleeTimeZone) zones = [input.calleeTimeZone];
      else {
        if (!zonesByNumber.has(input.toPhoneNumber))
          zonesByNumber.set(input.toPhoneNumber, timeZonesOfNumber(input.toPhoneNumber));
        zones = await zonesByNumber.get(input.toPhoneNumber)!;
        if (!zones.length) zones = [template.timeZone ?? 'UTC'];
      }
      const key = `${template._id.toHexString()} ${zones.join(' ')}`;
      if (!neverOpens.has(key)) {
        const check = checkCallingWindow(plan.callingWindow, zones, now);
        neverOpens.set(key, !check.open && check.opensAt === null);
      }
      if (neverOpens.get(key)) {
        found.push(
          `${field(input.calleeTimeZone ? 'calleeTimeZone' : 'toPhoneNumber')} is in time zones (${zones.join(', ')}) ` +
            "where the call template's calling hours are never open at the same time within a year; give calleeTimeZone",
        );
      }
    }
    if (found.length || !template || !from) {
      for (const problem of found) problems.push(problem);
      continue;
    }
    calls.push({
      plan,
      doc: {
        _id: new Types.ObjectId(),
        teamId: team._id,
        callTemplateId: template._id,
        nameOfHuman: input.nameOfHuman,
        toPhoneNumber: input.toPhoneNumber,
        promptVariableValues: input.promptVariableValues ?? [],
        phoneNumberId: number?._id,
        fromPhoneNumber: from,
        toEmailAddress: input.toEmailAddress,
        status: 'queued',
        telephonyProvider: provider,
        record: input.record ?? false,
        callDelayedUntil: input.callDelayedUntil,
        phoneCallWebhooks: (input.phoneCallWebhooks ?? []).map((hook) => ({
          url: hook.url,
          subscribedEvent: hook.subscribedEvent,
          secretSealed: sealWith(options.secretBox, hook.secret),
        })),
        fileId: options.fileId,
        fileName: options.fileName,
        callOrigin: options.origin,
        // Due now (or in the past, placed at once: decisions.md) is queued, not scheduled.
        statusExtraInfo: {
          statusCode: input.callDelayedUntil && input.callDelayedUntil.getTime() > Date.now() ? 'scheduled' : 'queued',
          dateTime: new Date(),
        },
        dispatchBatchId: options.dispatchBatchId,
        calleeTimeZone: input.calleeTimeZone,
        calleeTimeZones: zones,
      },
    });
  }
  return { calls, problems };
}

function sealWith(secretBox: SecretBox | undefined, secret: string): string {
  if (!secretBox) throw new Error("prepareCalls: a call's own webhook secret needs the secret box to be sealed");
  return secretBox.seal(secret);
}

function checkVariables(template: CallTemplateDoc, input: PhoneCallCreateInput, field: string): string[] {
  const values = input.promptVariableValues ?? [];
  const known = new Set([...template.variables, ...template.requiredVariables]);
  const problems: string[] = [];
  for (const name of template.requiredVariables) {
    const givenAs = values.filter((v) => v.key === name);
    if (givenAs.length === 0) problems.push(`${field} must include ${name} (required by the call template)`);
    // Empty, it would be dropped from the prompt as an optional one is: what `required` is there to
    // stop (it failed the create with a 500 before 2026-11-30). Spaces alone were taken, and still are.
    else if (givenAs.every((v) => v.value === ''))
      problems.push(`${field} must give ${name} a value (required by the call template)`);
  }
  for (const name of new Set(values.map((v) => v.key))) {
    if (!known.has(name)) problems.push(`${field} has unknown key ${name} (the call template has no such variable)`);
  }
  return problems;
}

function defaultFromNumber(
  team: TeamDoc,
  provider: ProviderName,
  number: PhoneNumberDoc | undefined,
): string | undefined {
  if (number && number.provider === provider) return number.number;
  return team.providerSettings.find((s) => s.provider === provider)?.fromNumbers[0] ?? undefined;
}
