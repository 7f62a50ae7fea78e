// Injected faults, for chaos tests: requests refused before anything is done, dials placed and then
// their answer lost, callbacks held back (so later ones overtake them) or sent twice. Share-based
// faults draw from seeded generators, one per kind of decision, so the n-th decision of a kind is the
// same in every run with the same seed however the other kinds interleave with it.
import { isRecord } from './http';

export type DialFault = 'answer-500' | 'drop' | 'timeout';
export const DIAL_FAULTS: readonly DialFault[] = ['answer-500', 'drop', 'timeout'];

export interface EmulatorFaults {
  seed?: number;
  /** Share (0..1) of provider API requests (not /emulator/, not media downloads) answered 503 before anything is done. */
  refuseShare?: number;
  /** Share of placed dials whose answer is then lost; the kinds are taken in turn. */
  lostAnswer?: { share: number; kinds: DialFault[] };
  callbacks?: {
    /** Share of callbacks held back by a random delay in [0, maxDelayMs]: the ones after them overtake them. */
    lateShare?: number;
    /** Default 2000. */
    maxDelayMs?: number;
    /** Share of callbacks delivered twice: a fresh copy right after the first was accepted. */
    duplicateShare?: number;
    /** Share of callbacks never sent, as when a provider gives up on a receiver that is down. */
    lostShare?: number;
  };
  /** How long a `timeout` lost answer holds the connection before closing it; default 60 000. */
  timeoutHoldMs?: number;
}

/** Every `every`-th placed dial loses its answer (`setDialFaults`), independently of the shares. */
export interface DialFaults {
  every: number;
  kinds: DialFault[];
}

/** Faults injected since the emulator started. */
export interface InjectedFaults {
  refused: number;
  lostAnswers: number;
  late: number;
  duplicated: number;
  /** Callbacks never sent. */
  lost: number;
}

/** What happens to one callback: never sent, held back by `delayMs` (null: sent in its turn), sent twice. */
export interface CallbackFault {
  lost: boolean;
  delayMs: number | null;
  duplicate: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const DEFAULT_SEED = 1;
const DEFAULT_MAX_DELAY_MS = 2000;
const DEFAULT_TIMEOUT_HOLD_MS = 60_000;
// Appended, never reordered: each stream's seed follows from its place.
const STREAMS = ['refuse', 'lostAnswer', 'late', 'delay', 'duplicate', 'lostCallback'] as const;
type Stream = (typeof STREAMS)[number];

/** mulberry32: a tiny, fast, seeded generator of numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Checker = (field: unknown, name: string) => string[];

/** The problems with an object's fields: unknown ones, missing required ones, and what each checker finds. */
function check(
  value: Record<string, unknown>,
  where: string,
  checkers: Record<string, Checker>,
  required: string[] = [],
): string[] {
  const unknown = Object.keys(value)
    .filter((key) => !(key in checkers))
    .map((key) => `${where}${key} is not a known field`);
  const missing = required.filter((key) => value[key] === undefined).map((key) => `${where}${key} is required`);
  const problems = Object.entries(checkers).flatMap(([key, checker]) =>
    value[key] === undefined ? [] : checker(value[key], `${where}${key}`),
  );
  return [...unknown, ...missing, ...problems];
}

const object =
  (checkers: Record<string, Checker>, required: string[] = []): Checker =>
  (field, name) =>
    isRecord(field) ? check(field, `${name}.`, checkers, required) : [`${name} must be an object`];

const share: Checker = (field, name) =>
  typeof field === 'number' && field >= 0 && field <= 1 ? [] : [`${name} must be a number from 0 to 1`];

const nonNegative: Checker = (field, name) =>
  typeof field === 'number' && Number.isFinite(field) && field >= 0 ? [] : [`${name} must be a number >= 0`];

const integer: Checker = (field, name) => (Number.isSafeInteger(field) ? [] : [`${name} must be an integer`]);

const kinds: Checker = (field, name) =>
  Array.isArray(field) && field.length > 0 && field.every((k) => DIAL_FAULTS.includes(k as DialFault))
    ? []
    : [`${name} must be a non-empty array of ${DIAL_FAULTS.join(', ')}`];

const faultsCheckers: Record<string, Checker> = {
  seed: integer,
  refuseShare: share,
  lostAnswer: object({ share, kinds }, ['share', 'kinds']),
  callbacks: object({ lateShare: share, maxDelayMs: nonNegative, duplicateShare: share, lostShare: share }),
  timeoutHoldMs: nonNegative,
};

const dialFaultsCheckers: Record<string, Checker> = {
  every: (field, name) => (typeof field === 'number' && field >= 1 ? [] : [`${name} must be a number >= 1`]),
  kinds,
};

/** A PUT /emulator/faults body: EmulatorFaults or null, every problem named. */
export function parseFaults(value: unknown): Parsed<EmulatorFaults | null> {
  if (value === null) return { ok: true, value: null };
  if (!isRecord(value)) return { ok: false, problems: ['the body must be an object or null'] };
  const problems = check(value, '', faultsCheckers);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: structuredClone(value) as EmulatorFaults };
}

/** A PUT /emulator/dial-faults body: { every, kinds } or null. */
export function parseDialFaults(value: unknown): Parsed<DialFaults | null> {
  if (value === null) return { ok: true, value: null };
  if (!isRecord(value)) return { ok: false, problems: ['the body must be an object or null'] };
  const problems = check(value, '', dialFaultsCheckers, ['every', 'kinds']);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { every: Math.floor(value.every as number), kinds: [...(value.kinds as DialFault[])] } };
}

/** Every fault decision, drawn in one place; counts what it injects. */
export class FaultInjector {
  readonly injected: InjectedFaults = { refused: 0, lostAnswers: 0, late: 0, duplicated: 0, lost: 0 };
  private config: EmulatorFaults | null = null;
  private streams = FaultInjector.streamsFor(DEFAULT_SEED);
  private lostTurn = 0;
  private scheduled: (DialFaults & { seen: number }) | null = null;

  private static streamsFor(seed: number): Record<Stream, () => number> {
    // Distinct seeds per stream (golden-ratio steps), so the kinds of decision do not share draws.
    const entries = STREAMS.map((name, i) => [name, mulberry32(seed ^ Math.imul(i + 1, 0x9e3779b9))] as const);
    return Object.fromEntries(entries) as Record<Stream, () => number>;
  }

  /** Sets the share-based faults from now on, reseeded (null: none); the counters go on. */
  configure(faults: EmulatorFaults | null): void {
    this.config = faults && Object.keys(faults).length > 0 ? structuredClone(faults) : null;
    this.streams = FaultInjector.streamsFor(faults?.seed ?? DEFAULT_SEED);
    this.lostTurn = 0;
  }

  current(): EmulatorFaults | null {
    return this.config ? structuredClone(this.config) : null;
  }

  /** The every-th dial faults (setDialFaults); null turns them off. */
  schedule(faults: DialFaults | null): void {
    this.scheduled = faults ? { ...faults, kinds: [...faults.kinds], seen: 0 } : null;
  }

  get timeoutHoldMs(): number {
    return this.config?.timeoutHoldMs ?? DEFAULT_TIMEOUT_HOLD_MS;
  }

  /** One draw: true with probability `probability` (no draw, false, when it is unset). */
  private draw(stream: Stream, probability: number | undefined): boolean {
    if (probability === undefined) return false;
    return this.streams[stream]() < probability;
  }

  /** Whether to answer a provider API request 503 before doing anything. */
  refuses(): boolean {
    const refused = this.draw('refuse', this.config?.refuseShare);
    if (refused) this.injected.refused += 1;
    return refused;
  }

  /** How the answer to a request that placed `placed` calls is lost, if it is. */
  dialAnswerFault(placed: number): DialFault | null {
    if (placed === 0) return null;
    // Both decisions are always taken, so neither shifts the other's sequence.
    const scheduled = this.nextScheduled();
    const lost = this.config?.lostAnswer;
    const drawn = lost && this.draw('lostAnswer', lost.share) ? lost.kinds[this.lostTurn++ % lost.kinds.length]! : null;
    const kind = scheduled ?? drawn;
    if (kind) this.injected.lostAnswers += placed;
    return kind;
  }

  private nextScheduled(): DialFault | null {
    const faults = this.scheduled;
    if (!faults) return null;
    faults.seen += 1;
    if (faults.seen % faults.every !== 0) return null;
    return faults.kinds[(faults.seen / faults.every - 1) % faults.kinds.length]!;
  }

  /** What happens to a callback about to join its call's queue. */
  callbackFault(): CallbackFault {
    const callbacks = this.config?.callbacks;
    if (this.draw('lostCallback', callbacks?.lostShare)) {
      this.injected.lost += 1;
      return { lost: true, delayMs: null, duplicate: false };
    }
    const late = this.draw('late', callbacks?.lateShare);
    const duplicate = this.draw('duplicate', callbacks?.duplicateShare);
    const delayMs = late ? Math.round(this.streams.delay() * (callbacks?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS)) : null;
    if (late) this.injected.late += 1;
    if (duplicate) this.injected.duplicated += 1;
    return { lost: false, delayMs, duplicate };
  }
}
