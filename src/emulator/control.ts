// The control API under /emulator/ (EmulatorOptions.control): lets a test harness that runs the
// emulator as its own process switch faults on and off and read what the emulator saw. No provider
// path starts with /emulator/, so these routes never shadow one.
import type { Emulator } from './index';
import { parseDialFaults, parseFaults, type Parsed } from './faults';
import { json, noContent, parseJsonBody, type ApiRequest, type ApiResponse, type Route } from './http';

export type ControlledEmulator = Pick<
  Emulator,
  'calls' | 'setFaults' | 'faults' | 'setDialFaults' | 'dialFaults' | 'idle'
>;

/** How long GET /emulator/idle waits for the emulator to become idle. */
const IDLE_WAIT_MS = 30_000;

function badRequest(error: string): ApiResponse {
  return json(400, { error });
}

/** The request's JSON body parsed by `parse`, or the 400 answering it. */
function bodyOf<T>(req: ApiRequest, parse: (value: unknown) => Parsed<T>): { value: T } | { refusal: ApiResponse } {
  let body: unknown;
  try {
    body = parseJsonBody(req);
  } catch {
    return { refusal: badRequest('the body is not valid JSON') };
  }
  if (body === undefined) return { refusal: badRequest('the body is empty: send JSON, or null') };
  const parsed = parse(body);
  return parsed.ok ? { value: parsed.value } : { refusal: badRequest(parsed.problems.join('; ')) };
}

/** True if `work` settles within `ms`, false otherwise (the timer never outlives the answer). */
async function settlesWithin(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export function createControlRoutes(emulator: ControlledEmulator, idleWaitMs = IDLE_WAIT_MS): Route[] {
  const calls = (): ApiResponse => json(200, { calls: emulator.calls() });

  const putFaults: Route['handle'] = (req) => {
    const body = bodyOf(req, parseFaults);
    if ('refusal' in body) return body.refusal;
    emulator.setFaults(body.value);
    return noContent();
  };

  const putDialFaults: Route['handle'] = (req) => {
    const body = bodyOf(req, parseDialFaults);
    if ('refusal' in body) return body.refusal;
    emulator.setDialFaults(body.value);
    return noContent();
  };

  const idle: Route['handle'] = async () => json(200, { idle: await settlesWithin(emulator.idle(), idleWaitMs) });

  return [
    { method: 'GET', pattern: /^\/emulator\/calls$/, handle: calls },
    { method: 'GET', pattern: /^\/emulator\/faults$/, handle: () => json(200, emulator.faults()) },
    { method: 'PUT', pattern: /^\/emulator\/faults$/, handle: putFaults },
    { method: 'GET', pattern: /^\/emulator\/dial-faults$/, handle: () => json(200, { lost: emulator.dialFaults() }) },
    { method: 'PUT', pattern: /^\/emulator\/dial-faults$/, handle: putDialFaults },
    { method: 'GET', pattern: /^\/emulator\/idle$/, handle: idle },
  ];
}
