import pino from 'pino';

/**
 * The server's log: pino, one JSON object per line on stdout, each carrying
 * the request id where there is one (`npm run dev` pretty-prints it). Callers
 * never pass credentials, tokens or secrets, and the fields that could hold
 * them are redacted all the same.
 */
export type Logger = pino.Logger;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty, a dev dependency) instead of JSON. */
  pretty?: boolean;
}

export function createLogger(level: LogLevel = 'info', options: LoggerOptions = {}): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['authorization', 'password', 'pass', 'token', 'secret', '*.authorization', '*.password', '*.token'], censor: '[redacted]' },
    ...(options.pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid' } } } : {}),
  });
}

/**
 * pino's `stdTimeFunctions.isoTime`, the same text, made once a millisecond: a busy server writes several lines in
 * each (every request's access line), and a Date and its ISO text were a sixth of the line's cost.
 */
let timeAt = Number.NaN;
let timeText = '';
export function isoTime(): string {
  const now = Date.now();
  if (now !== timeAt) {
    timeAt = now;
    timeText = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeText;
}

export function parseLogLevel(value: string | undefined): LogLevel {
  return value !== undefined && (LEVELS as readonly string[]).includes(value) ? (value as LogLevel) : 'info';
}
