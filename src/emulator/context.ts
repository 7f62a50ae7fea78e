// What the emulator gives each provider module: the shared simulator, a callback queue factory,
// its own public URL and the dial ledger.
import type { ProviderName } from '../contracts/providers';
import type { CallbackQueue } from './delivery';
import type { DialRateLimiter } from './dial-rate';
import type { CallPlan } from './scenarios';
import type { CallSimulator, EmulatedCall, EmulatorLogger } from './simulation';

export interface ProviderContext {
  simulator: CallSimulator;
  logger: EmulatorLogger;
  /** Absolute public URL of this provider's API root in the emulator (for links and media URLs). */
  publicUrl(): string;
  newQueue(): CallbackQueue;
  /** Records an accepted dial (callsTo counts them). */
  dialled(call: EmulatedCall): void;
  /** The accounts' dial rates (off unless configured). */
  dialRate: DialRateLimiter;
}

export function newCall(
  provider: ProviderName,
  fields: {
    id: string;
    account: string;
    to: string;
    from: string;
    record: boolean;
    plan: CallPlan;
    timeLimitSeconds: number;
    machineDetection?: string | null;
    callbackUrl?: string | null;
  },
): EmulatedCall {
  return {
    provider,
    ...fields,
    machineDetection: fields.machineDetection ?? null,
    callbackUrl: fields.callbackUrl ?? null,
    createdAt: new Date(),
    state: 'queued',
    spoken: [],
  };
}
