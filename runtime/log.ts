/**
 * One JSON object per line on stdout (errors on stderr), each carrying the
 * request id. Callers never pass credentials, tokens or secrets.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  /** Whether lines of this level are written: lets a hot path skip building them. */
  enabled(level: LogLevel): boolean;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel = 'info'): Logger {
  const threshold = RANK[level];
  const write = (at: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (RANK[at] < threshold) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: at, message, ...fields });
    (at === 'error' || at === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return {
    enabled: (at) => RANK[at] >= threshold,
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

export function parseLogLevel(value: string | undefined): LogLevel {
  return value !== undefined && value in RANK ? (value as LogLevel) : 'info';
}
