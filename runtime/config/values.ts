import { readFileSync } from 'node:fs';

// Readers of one setting's text (runtime/config.ts reads the environment with them): each returns the value, or
// throws an error that names the variable and says what it may be.

export type ConsoleMode = 'on' | 'off' | 'admin';

export function bounded(value: string | undefined, fallback: number, min: number, max: number, name: string): number {
  const number = whole(value, fallback, name);
  if (number < min || number > max) throw new Error(`${name} is ${min} to ${max}, not ${value}`);
  return number;
}

export function portOf<T extends number | undefined>(value: string | undefined, fallback: T, name: string): number | T {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!/^[0-9]{1,5}$/.test(value) || port > 65535) throw new Error(`${name} is not a port number: ${value}`);
  return port;
}

export function whole(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[0-9]+$/.test(value)) throw new Error(`${name} is a whole number, not ${value}`);
  return Number(value);
}

export function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new Error(`${name} is true or false, not ${value}`);
}

/** ETAGS: `on` (the default) or `off`. */
export function etagsOf(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new Error(`ETAGS is on or off, not ${value}`);
}

/**
 * PROXY_HOPS says how many proxies stand in front; TRUST_PROXY=true, the older setting, says one does. Either
 * alone is enough; both must agree.
 */
export function proxyHops(trust: string | undefined, hops: string | undefined): number {
  const trusted = flag(trust, 'TRUST_PROXY');
  if (hops === undefined || hops === '') return trusted ? 1 : 0;
  const count = whole(hops, 0, 'PROXY_HOPS');
  const said = trust !== undefined && trust !== '';
  if (said && trusted !== count > 0) {
    throw new Error(
      `TRUST_PROXY=${trust} and PROXY_HOPS=${hops} disagree: PROXY_HOPS alone says how many proxies stand in front of the server (0 for none), so remove TRUST_PROXY`,
    );
  }
  return count;
}

export function tlsFiles(cert: string | undefined, key: string | undefined): { cert: Buffer; key: Buffer } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new Error('HTTPS needs both TLS_CERT_FILE and TLS_KEY_FILE');
  return { cert: readFileSync(cert), key: readFileSync(key) };
}

export function loginCounters(value: string | undefined): 'memory' | 'database' {
  if (value === undefined || value === '' || value === 'memory') return 'memory';
  if (value === 'database') return 'database';
  throw new Error(`LOGIN_COUNTERS is memory or database, not ${value}`);
}

/** `CONSOLE`: on (the default, for the demo), off, or admin (the ADMIN_PORT listener only). */
export function consoleModeOf(value: string | undefined): ConsoleMode {
  if (value === undefined || value === '' || value === 'on') return 'on';
  if (value === 'off' || value === 'admin') return value;
  throw new Error(`CONSOLE is on, off or admin (the ADMIN_PORT listener only), not ${value}`);
}
