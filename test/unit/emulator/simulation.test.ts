// The call simulator on its own: the detector's events among the planned utterances, the caller
// speaking over the plan (speakAndThen) or hanging up at any point, and the provider's time limit.
import { describe, expect, it } from 'vitest';
import { newCall } from '../../../src/emulator/context';
import { MACHINE_GREETING, planCall, speakingSeconds } from '../../../src/emulator/scenarios';
import { CallSimulator, type CallObserver, type EmulatedCall } from '../../../src/emulator/simulation';
import { VOICEMAIL } from './receiver';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

const newSimulator = (): CallSimulator => new CallSimulator(0.005, quiet);

/** Starts a call to `to` and records what the observer is told, in order. */
function simulate(
  simulator: CallSimulator,
  to: string,
  detectMachines: boolean,
  hooks: Partial<CallObserver> = {},
  timeLimitSeconds = 14_400,
) {
  const call = newCall('twilio', {
    id: 'CA1',
    account: 'AC1',
    to,
    from: '+14155550100',
    record: true,
    plan: planCall({ ringTimeoutSeconds: 60, to, openingLine: 'Hello there.', detectMachines }),
    timeLimitSeconds,
  });
  const seen: string[] = [];
  const note =
    (name: keyof CallObserver, detail: (...args: never[]) => string = () => '') =>
    (...args: never[]) => {
      seen.push(`${name}${detail(...args)}`);
      (hooks[name] as ((...a: never[]) => void) | undefined)?.(...args);
    };
  const observer: CallObserver = {
    initiated: note('initiated'),
    ringing: note('ringing'),
    answered: note('answered'),
    spoke: note('spoke', (_c: EmulatedCall, u: { speaker: string }) => `:${u.speaker}`),
    machineDetected: note('machineDetected', (_c: EmulatedCall, d: { result: string }) => `:${d.result}`),
    greetingEnded: note('greetingEnded', (_c: EmulatedCall, e: { beep: boolean }) => `:${e.beep ? 'beep' : 'silence'}`),
    spoken: note('spoken'),
    ended: note('ended'),
  };
  simulator.start(call, observer);
  return { call, seen };
}

describe('CallSimulator', () => {
  it('runs the detector alongside the greeting: detected while it plays, then its end', async () => {
    const simulator = newSimulator();
    const { call, seen } = simulate(simulator, '+14155556200', true);
    await simulator.idle();
    expect(seen).toEqual([
      'initiated',
      'ringing',
      'answered',
      'spoke:human',
      'machineDetected:machine',
      'greetingEnded:beep',
      'ended',
    ]);
    expect(call).toMatchObject({ answeredBy: 'machine', end: { outcome: 'completed', hungUpBy: 'callee' } });
  });

  it('speaks a message, tells the observer, and has the machine hang up 10 s later', async () => {
    const simulator = newSimulator();
    const run = simulate(simulator, '+14155556201', true, {
      greetingEnded: (call) => expect(simulator.speakAndThen(call, VOICEMAIL, 'notify')).toBe(true),
    });
    const { call, seen } = run;
    expect(simulator.speakAndThen(call, VOICEMAIL, 'notify')).toBe(false);
    await simulator.idle();
    expect(seen.slice(3)).toEqual([
      'spoke:human',
      'machineDetected:machine',
      'greetingEnded:silence',
      'spoke:agent',
      'spoken',
      'ended',
    ]);
    expect(call.end).toEqual({ outcome: 'completed', hungUpBy: 'callee' });
    const message = call.spoken[1];
    expect(message).toMatchObject({ speaker: 'agent', text: VOICEMAIL });
    // The recording runs through the message and the machine's wait after it.
    const talk = message.offsetSeconds + speakingSeconds(VOICEMAIL) + 10;
    expect(call.talkSeconds).toBeCloseTo(talk, 1);
    expect(call.recording?.durationSeconds).toBeCloseTo(talk, 1);
    expect(simulator.speakAndThen(call, VOICEMAIL, 'notify')).toBe(false);
  });

  it('cuts the greeting short with a message that hangs up when said; the detector still reports', async () => {
    // About 4 s: said over the greeting, it outlasts the detector's 4.3 s but not the greeting.
    const message = 'Hi Grace, please call Acme Dental back about your check-up.';
    const simulator = newSimulator();
    const run = simulate(simulator, '+14155556200', true, {
      spoke: (call, utterance) => {
        if (utterance.speaker === 'human') simulator.speakAndThen(call, message, 'hang-up');
      },
    });
    await simulator.idle();
    expect(run.seen.slice(3)).toEqual(['spoke:human', 'spoke:agent', 'machineDetected:machine', 'ended']);
    expect(run.call.end).toEqual({ outcome: 'completed', hungUpBy: 'caller' });
    expect(run.call.talkSeconds).toBeLessThan(0.8 + speakingSeconds(MACHINE_GREETING));
  });

  it('lets the caller hang up in the middle of a message', async () => {
    const simulator = newSimulator();
    const run = simulate(simulator, '+14155556202', true, {
      machineDetected: (call) => {
        simulator.speakAndThen(call, VOICEMAIL, 'hang-up');
        expect(simulator.hangUp(call)).toBe(true);
        expect(simulator.speakAndThen(call, VOICEMAIL, 'hang-up')).toBe(false);
      },
    });
    await simulator.idle();
    expect(run.seen.slice(-3)).toEqual(['machineDetected:fax', 'spoke:agent', 'ended']);
    expect(run.call.end).toEqual({ outcome: 'completed', hungUpBy: 'caller' });
    expect(run.call.talkSeconds).toBeLessThan(2.5 + speakingSeconds(VOICEMAIL));
  });

  it('ends a call still connected at its time limit, as the provider does when nobody hangs up', async () => {
    const simulator = newSimulator();
    const { call, seen } = simulate(simulator, '+14155551440', false, {}, 90);
    await simulator.idle();
    expect(seen).toEqual(['initiated', 'ringing', 'answered', 'spoke:agent', 'spoke:human', 'ended']);
    expect(call.end).toEqual({ outcome: 'completed', hungUpBy: 'time-limit' });
    expect(call.talkSeconds).toBe(90);
    expect(call.recording?.durationSeconds).toBe(90);
    // Its time on the wall clock is the limit's, scaled like the rest of the call: 450 ms, give or take
    // the few milliseconds by which Date.now() and the timers' own clock differ (448 seen in a CI run).
    const lasted = call.endedAt!.getTime() - call.answeredAt!.getTime();
    expect(lasted).toBeGreaterThanOrEqual(90 * 1000 * 0.005 - 5);
  });

  it('cuts the plan short at the time limit, a message said over it too; a call ending sooner ends as planned', async () => {
    const simulator = newSimulator();
    const greetingEnd = planCall({ ringTimeoutSeconds: 60, to: '+14155556201', openingLine: '', detectMachines: true })
      .greetingEnd!.atSeconds;
    const limit = Math.ceil(greetingEnd) + 3;
    const messaged = simulate(
      simulator,
      '+14155556201',
      true,
      { greetingEnded: (call) => simulator.speakAndThen(call, VOICEMAIL, 'notify') },
      limit,
    );
    // Within the limit: the fax hangs up 20 s after answer, as planned.
    const fax = simulate(simulator, '+14155556202', false, {}, 21);
    await simulator.idle();
    expect(messaged.seen.slice(-3)).toEqual(['greetingEnded:silence', 'spoke:agent', 'ended']);
    expect(messaged.call).toMatchObject({ talkSeconds: limit, end: { outcome: 'completed', hungUpBy: 'time-limit' } });
    expect(fax.call).toMatchObject({ talkSeconds: 20, end: { outcome: 'completed', hungUpBy: 'callee' } });
  });

  it('sends no detector events when the dial did not ask for detection', async () => {
    const simulator = newSimulator();
    const { call, seen } = simulate(simulator, '+14155556202', false);
    await simulator.idle();
    expect(seen).toEqual(['initiated', 'ringing', 'answered', 'spoke:agent', 'ended']);
    expect(call.answeredBy).toBeUndefined();
  });
});
