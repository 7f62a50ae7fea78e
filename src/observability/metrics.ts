// Prometheus metrics (prom-client). Each process role has a registry of its own, so that the API and
// a worker running in one process (the tests) still report only their own figures. Label values come
// from small fixed sets (route templates, statuses, providers, outcomes): never ids or numbers.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds: from a fast read to a slow batch create. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ApiMetrics {
  registry: Registry;
  /** One finished request: `route` is the route's template (`/v1/phoneCalls/:id`), never a raw path. */
  request(method: string, route: string, status: number, seconds: number): void;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    request(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}

/** How a dial activity ended. */
export type DialOutcome =
  | 'placed'
  | 'found-placed'
  | 'rejected'
  | 'rate-limited'
  | 'turn-ahead'
  | 'do-not-call'
  | 'window-passed'
  | 'hours-closed'
  | 'try-out-of-time';
/** How one webhook delivery attempt ended. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'gone';

export interface WorkerMetrics {
  registry: Registry;
  statusChanged(status: string, statusCode: string, provider: string): void;
  dialled(provider: string, outcome: DialOutcome): void;
  webhookAttempt(outcome: DeliveryOutcome, seconds: number): void;
  activityFailed(activity: string, errorType: string): void;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const statusChanges = new Counter({
    name: 'phone_call_status_changes_total',
    help: 'Phone calls reaching a status (with its status code), by provider.',
    labelNames: ['status', 'status_code', 'provider'] as const,
    registers: [registry],
  });
  const dials = new Counter({
    name: 'phone_call_dials_total',
    help:
      'Dial activities by provider and outcome: placed, found-placed (a retry found the call placed), ' +
      "rejected, rate-limited (the provider answered 429), turn-ahead (not placed: the team's own dial rate " +
      'for the account was reached), do-not-call, window-passed (retried too late to place, and no earlier ' +
      'try had), hours-closed (the calling hours closed before the try could place the call), try-out-of-time ' +
      '(a try left too little time for the provider request; its retry looks first). rate(placed[1m]) is dials per second.',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered (2xx), failed (retried unless the last), gone (410).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'webhook_delivery_attempt_duration_seconds',
    help: "Time from a delivery attempt's start to the receiver's answer (or the failure), by outcome.",
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'activity_failures_total',
    help: 'Activity attempts that failed, by activity and error type (retried ones count each time).',
    labelNames: ['activity', 'error_type'] as const,
    registers: [registry],
  });
  return {
    registry,
    statusChanged: (status, statusCode, provider) => statusChanges.inc({ status, status_code: statusCode, provider }),
    dialled: (provider, outcome) => dials.inc({ provider, outcome }),
    webhookAttempt(outcome, seconds) {
      attempts.inc({ outcome });
      attemptDuration.observe({ outcome }, seconds);
    },
    activityFailed: (activity, errorType) => failures.inc({ activity, error_type: errorType }),
  };
}
