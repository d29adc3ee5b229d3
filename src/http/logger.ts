import { pino, type DestinationStream, type LevelWithSilent, type Logger } from 'pino';

/** Keys never written to logs, at any of the first four levels of a log object. */
const SECRET_KEYS = [
  'authorization', 'Authorization', 'cookie', 'Cookie', 'set-cookie', 'x-api-key',
  'password', 'secret', 'token', 'apiKey', 'accessToken', 'refreshToken', 'idToken', 'clientSecret',
];

// The redactor matches exact depths only, so spell out each depth.
const redactPaths = SECRET_KEYS.flatMap((key) => {
  const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  const join = (prefix: string) => (k.startsWith('[') ? `${prefix}${k}` : prefix ? `${prefix}.${k}` : k);
  return [join(''), join('*'), join('*.*'), join('*.*.*')];
});

export function createLogger(level: LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'gatehouse' },
    redact: { paths: redactPaths, censor: '[REDACTED]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
