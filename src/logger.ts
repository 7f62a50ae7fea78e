import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs; API keys, secrets and credentials are redacted wherever they appear. `context` adds
 * fields to every line from where it is written (the worker: the activity's call and workflow).
 */
export function createLogger(
  level: string,
  name: string,
  options: { context?: () => object; destination?: pino.DestinationStream } = {},
): Logger {
  const settings: pino.LoggerOptions = {
    name,
    ...(options.context ? { mixin: options.context } : {}),
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers["service-api-key"]',
        'headers["service-api-key"]',
        'req.headers.authorization',
        'headers.authorization',
        '*.secret',
        '*.key',
        '*.credentials',
        'key',
        'secret',
      ],
      censor: '[redacted]',
    },
  };
  // Standard output unless told otherwise (tests capture the lines to read them).
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
