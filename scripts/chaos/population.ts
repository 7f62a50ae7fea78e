// A scenario's own tenant and calls: a team on the emulator's three providers (seeded as the tests
// seed theirs, src/local/emulated-team.ts), its webhook to the harness's receiver, and a population
// of calls spread over outcomes, providers and schedules, created through the API.
import { seedEmulatedTeam, type EmulatedTeam } from '../../src/local/emulated-team';
import { PROVIDERS } from '../../src/contracts/providers';
import { createSecretBox } from '../../src/crypto/secret-box';
import { apiClient, describeAnswer, sleep, type ApiClient } from './http';

/** A seeded team (its `accounts`: the emulator's calls of this team are theirs) and its API client. */
export interface ChaosTeam extends EmulatedTeam {
  api: ApiClient;
}

export async function seedTeam(options: {
  name: string;
  apiUrl: () => string;
  encryptionKey: string;
  vonageSignatureSecret: string;
  telnyxPublicKey: string;
  /** A low cap makes calls wait for their dial in the team's pacer. */
  maxConcurrentCalls?: number;
}): Promise<ChaosTeam> {
  const team = await seedEmulatedTeam({
    name: options.name,
    secretBox: createSecretBox(options.encryptionKey),
    vonageSignatureSecret: options.vonageSignatureSecret,
    telnyxPublicKey: options.telnyxPublicKey,
    // Calls last a second or two of wall time here; a live call whose end is never heard of ends
    // by this timer (as `failed`, max-duration) within the run's deadline.
    maxDurationSeconds: 30,
    maxConcurrentCalls: options.maxConcurrentCalls,
  });
  return { ...team, api: apiClient(options.apiUrl, team.key) };
}

/** Registers the team's webhook at the receiver's `path`: every call of the team reports there. */
export async function subscribeWebhook(team: ChaosTeam, url: string, subscribedEvents: string[]): Promise<void> {
  const answer = await team.api.post('/v1/webhooks', { teamId: team.teamId, url, subscribedEvents, method: 'POST' });
  if (answer.status !== 200) throw new Error(`POST /v1/webhooks: ${describeAnswer(answer)}`);
}

/** What the emulator does with a number: chosen by its last four digits (src/emulator/scenarios.ts). */
export type PlannedOutcome =
  'conversation' | 'busy' | 'declined' | 'no-answer' | 'refused' | 'drop-after-answer' | 'silent' | 'machine';

const LAST_FOUR: Record<Exclude<PlannedOutcome, 'conversation'>, string> = {
  busy: '1486',
  declined: '1603',
  'no-answer': '1408',
  refused: '1404',
  'drop-after-answer': '1500',
  silent: '1200',
  // An answering machine; the seeded template has no machine detection, so it is a completed call.
  machine: '6200',
};

/** Twelve calls' outcomes, repeated: conversations most, and every other way a call ends. */
const MIX: PlannedOutcome[] = [
  'conversation',
  'busy',
  'conversation',
  'no-answer',
  'conversation',
  'declined',
  'drop-after-answer',
  'conversation',
  'silent',
  'refused',
  'machine',
  'busy',
];
const AREA_CODES = ['415', '510', '650', '408', '212', '646', '718', '917', '312', '213', '617', '206'];
let numbersIssued = 0;

/**
 * A number of this run no other call has (up to 9,600 of them): the Vonage adapter finds a dial it
 * may already have placed by its two numbers, so two calls to one number would mix up (README,
 * "Known limits"); the last four digits pick the emulator's outcome.
 */
export function uniqueNumber(outcome: PlannedOutcome): string {
  const n = numbersIssued++;
  const area = AREA_CODES[n % AREA_CODES.length]!;
  const exchange = 200 + (Math.floor(n / AREA_CODES.length) % 800);
  // Conversations: varied last digits, so the emulator's callees vary too (3xxx picks no special outcome).
  const lastFour = outcome === 'conversation' ? `3${String(n % 1000).padStart(3, '0')}` : LAST_FOUR[outcome];
  return `+1${area}${exchange}${lastFour}`;
}

export interface PlannedCall {
  /** Names the call in reports and in its record (`nameOfHuman`), so each element is found once. */
  element: string;
  outcome: PlannedOutcome;
  body: Record<string, unknown>;
}

/**
 * `count` calls over every outcome and provider; every fourth is scheduled to fall due between
 * `scheduleFromMs` and `scheduleFromMs + spreadMs` from now (during the fault), the rest are due at
 * once; half of the conversations are recorded.
 */
export function planPopulation(
  scenario: string,
  team: ChaosTeam,
  count: number,
  schedule: { fromMs: number; spreadMs: number },
): PlannedCall[] {
  const scheduledCount = Math.floor(count / 4);
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    const outcome = MIX[i % MIX.length]!;
    const element = `${scenario}#${i}`;
    const scheduledIndex = i % 4 === 3 ? Math.floor(i / 4) : -1;
    const body: Record<string, unknown> = {
      teamId: team.teamId,
      callTemplateId: team.templateId,
      toPhoneNumber: uniqueNumber(outcome),
      nameOfHuman: element,
      promptVariableValues: [{ key: 'firstName', value: 'Lin' }],
      telephonyProvider: PROVIDERS[i % PROVIDERS.length],
      record: outcome === 'conversation' && i % 2 === 0,
    };
    if (scheduledIndex >= 0) {
      const offset = schedule.fromMs + (schedule.spreadMs * (scheduledIndex + 1)) / Math.max(1, scheduledCount);
      body.callDelayedUntil = new Date(now + offset).toISOString();
    }
    return { element, outcome, body };
  });
}

export interface Creation {
  /** Call id -> element, for every 201. */
  accepted: Map<string, string>;
  /** Elements that never got a 201, and why. */
  failures: string[];
}

/**
 * Creates each call with its own `Idempotency-Key`, `concurrency` at a time. No answer, a 5xx or a
 * 429 is retried with the same key (as a careful client does) until `deadlineMs`; another 4xx is a
 * failure of the harness itself.
 */
export async function createCalls(
  team: ChaosTeam,
  calls: PlannedCall[],
  options: { runId: string; concurrency: number; deadlineMs: number },
): Promise<Creation> {
  const accepted = new Map<string, string>();
  const failures: string[] = [];
  const deadline = Date.now() + options.deadlineMs;
  let next = 0;
  const createOne = async (call: PlannedCall) => {
    const headers = { 'Idempotency-Key': `chaos-${options.runId}-${call.element}` };
    for (;;) {
      const answer = await team.api.post('/v1/phoneCalls', call.body, headers);
      if (answer.status === 201) {
        accepted.set(String(answer.body.data._id), call.element);
        return;
      }
      const retryable = answer.status === 0 || answer.status === 429 || answer.status >= 500;
      if (!retryable || Date.now() > deadline) {
        failures.push(`${call.element}: POST /v1/phoneCalls answered ${describeAnswer(answer)}`);
        return;
      }
      await sleep(500);
    }
  };
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < calls.length) await createOne(calls[next++]!);
    }),
  );
  return { accepted, failures };
}
