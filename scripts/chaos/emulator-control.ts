// The provider emulator's control API (enabled by EMULATOR_CONTROL=1): the calls it placed, with
// the service call each was dialled for, and the faults it injects into what it says and sends.
import type { CallEnder, CallEndOutcome } from '../../src/emulator/simulation';
import { describeAnswer, requestJson } from './http';

export interface EmulatedCall {
  provider: 'twilio' | 'vonage' | 'telnyx';
  providerCallId: string;
  /** Twilio Account SID, Vonage application id, Telnyx API key. */
  account: string;
  placedAt: number | null;
  to: string;
  from: string;
  state: 'queued' | 'ringing' | 'answered' | 'ended';
  outcome: string;
  end?: { outcome: CallEndOutcome; hungUpBy: CallEnder };
  /** Our PhoneCall `_id` the dial was for (it travels in the provider request). */
  serviceCallId: string | null;
}

export interface EmulatorFaults {
  seed?: number;
  /** Provider requests answered 503, nothing done. */
  refuseShare?: number;
  /** The dial is placed (the phone rings), its answer lost. */
  lostAnswer?: { share: number; kinds: ('answer-500' | 'drop' | 'timeout')[] };
  /** Callbacks held back (late, out of order) or sent twice. */
  callbacks?: { lateShare?: number; maxDelayMs?: number; duplicateShare?: number };
  timeoutHoldMs?: number;
}

export interface InjectedFaults {
  refused: number;
  lostAnswers: number;
  late: number;
  duplicated: number;
  /** Callbacks never sent (a share the harness leaves at 0). */
  lost?: number;
}

export function emulatorControl(baseUrl: string) {
  const control = async <T>(method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<T> => {
    const answer = await requestJson<T>(`${baseUrl}/emulator/${path}`, { method, body, timeoutMs });
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`emulator control ${method} /emulator/${path}: ${describeAnswer(answer)}`);
    return answer.body;
  };
  return {
    async calls(): Promise<EmulatedCall[]> {
      return (await control<{ calls: EmulatedCall[] }>('GET', 'calls')).calls;
    },
    async setFaults(faults: EmulatorFaults | null): Promise<void> {
      // `null` as the body turns every fault off.
      const answer = await requestJson(`${baseUrl}/emulator/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: faults,
        timeoutMs: 15_000,
      });
      if (answer.status !== 204) throw new Error(`emulator control PUT /emulator/faults: ${describeAnswer(answer)}`);
    },
    async injected(): Promise<InjectedFaults> {
      return (await control<{ injected: InjectedFaults }>('GET', 'faults')).injected;
    },
    /** True once every call has ended and every callback was delivered (the emulator waits up to 30 s). */
    async idle(): Promise<boolean> {
      return (await control<{ idle: boolean }>('GET', 'idle', undefined, 45_000)).idle;
    },
  };
}
export type EmulatorControl = ReturnType<typeof emulatorControl>;
