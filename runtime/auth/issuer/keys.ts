import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { type IssuerSettings, keyUrlProblem } from '../../contract.js';
import { HttpError } from '../../errors.js';
import { type FetchedDocument, FetchFailed, fetchDocument } from './fetch.js';
import { jose } from './jose.js';

/**
 * An outside issuer's public keys (docs/internals/contract.md §9), kept fresh and kept
 * through an outage. jose verifies with them (createLocalJWKSet picks the key
 * by `kid` and by what the token's algorithm allows: RSA for RS and PS, P-256
 * for ES256, Ed25519 for EdDSA); what jose's remote key set lacks is built
 * here around it: how long a set is kept (Cache-Control max-age, bounded to
 * 1 minute .. 1 day, 10 minutes when absent), one fetch per refetch interval
 * whatever the number of unknown kids, and the last good set serving while
 * the provider is down, for the stale window, before requests get 503.
 */

export const MAX_KEYS = 100;
const DEFAULT_MAX_AGE = 600;
const MIN_MAX_AGE = 60;
const MAX_MAX_AGE = 86_400;

export interface KeyTimings {
  /** How long the last good keys serve once the provider stops answering; default 1 hour. */
  staleSeconds: number;
  /** At most one fetch per issuer in this many seconds, whatever asks for it; default 30. */
  refetchSeconds: number;
  /** How long one fetch may take; default 5 s. */
  fetchTimeoutMs?: number;
}

export const DEFAULT_KEY_TIMINGS: KeyTimings = { staleSeconds: 3600, refetchSeconds: 30 };

/** What the keys tell the rest of the server: each fetch's outcome (metrics), and what went wrong (log). */
export interface KeyEvents {
  fetched(iss: string, outcome: string): void;
  failed(iss: string, problem: string): void;
}

/** Keys of a set that are not public: a provider that publishes one is broken, and its set is refused whole. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

export class IssuerKeys {
  /** Goes up whenever the set changes: a verification remembered under an older generation is forgotten. */
  generation = 0;
  private keys: { resolve: JWTVerifyGetKey; text: string; freshUntil: number; kinds: string[] } | undefined;
  /** From the discovery document, or the configuration. */
  private jwksUri: string | undefined;
  /** When the first fetch since the last good one failed. */
  private failingSince: number | undefined;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  /** What the last failed fetch said. */
  private problem: string | undefined;
  /** The discovery document names another issuer: the configuration is wrong, not the network. */
  misconfigured: string | undefined;

  constructor(
    readonly settings: IssuerSettings,
    private readonly timings: KeyTimings,
    private readonly events: KeyEvents,
  ) {
    this.jwksUri = 'jwksUri' in settings.keys ? settings.keys.jwksUri : undefined;
  }

  /** The keys to verify with now, or a 503 naming the provider; starts a refresh in the background when the set has aged. */
  async current(): Promise<JWTVerifyGetKey> {
    if (this.keys === undefined) {
      // At start, or after a start with the provider down: wait for the fetch under way, or make one if it is time.
      if (this.inFlight) await this.inFlight;
      else if (this.mayFetch(Date.now())) await this.fetch();
    }
    this.check();
    return this.keys!.resolve;
  }

  /**
   * Whether the keys may serve now, for a token verified with them (a remembered verification included): starts
   * a refresh in the background once the set has aged, so that a key the provider removed is dropped even
   * while every caller's token is remembered, and throws the 503 once the keys are past the stale window.
   */
  check(now = Date.now()): void {
    if (this.keys !== undefined && now >= this.keys.freshUntil && this.mayFetch(now)) void this.fetch();
    if (this.keys === undefined || !this.usable(now)) throw this.unavailableError(now);
  }

  /**
   * A token named a key the set does not hold: fetch the set again (the provider may have added a key),
   * unless it was fetched within the refetch interval. Resolves true when a fetch was made or joined.
   */
  async refetch(): Promise<boolean> {
    if (this.inFlight) {
      await this.inFlight;
      return true;
    }
    if (!this.mayFetch(Date.now())) return false;
    await this.fetch();
    return true;
  }

  /** Fetches now, unless a fetch is under way (start-up, `xmlrest doctor`); resolves when it ends, never rejects. */
  load(): Promise<void> {
    return this.inFlight ?? this.fetch();
  }

  /**
   * Undefined while the keys can serve; else that they cannot, naming the issuer (for the public /readyz). What
   * the fetch met stays out: a discovery document steers the fetch, and its answer (refused, not JSON, too slow)
   * would tell anyone who can call /readyz what listens where. The log and `xmlrest doctor` say it (`lastProblem`).
   */
  unavailable(now = Date.now()): string | undefined {
    if (this.keys !== undefined && this.usable(now)) return undefined;
    return `identity provider ${this.settings.iss}: its keys cannot be used (the log and xmlrest doctor say why)`;
  }

  /** The type (and curve) of each key in hand: `RSA`, `EC P-256`, `OKP Ed25519`; empty when there are none. */
  get kinds(): readonly string[] {
    return this.keys?.kinds ?? [];
  }

  /** When the keys in hand stop being fresh (ms since the epoch), or undefined when there are none. */
  get freshUntil(): number | undefined {
    return this.keys?.freshUntil;
  }

  /** The last fetch's problem, while the last good keys still serve (doctor, the log). */
  get lastProblem(): string | undefined {
    return this.misconfigured ?? this.problem;
  }

  private mayFetch(now: number): boolean {
    return this.inFlight === undefined && now - this.lastAttempt >= this.timings.refetchSeconds * 1000;
  }

  /** Fresh, or stale but within the stale window of a provider that stopped answering (or is being asked right now). */
  private usable(now: number): boolean {
    const keys = this.keys!;
    if (now < keys.freshUntil || this.failingSince === undefined) return true;
    return now < Math.max(keys.freshUntil, this.failingSince) + this.timings.staleSeconds * 1000;
  }

  private unavailableError(now: number): HttpError {
    const wait = Math.max(1, Math.ceil((this.lastAttempt + this.timings.refetchSeconds * 1000 - now) / 1000));
    return new HttpError(503, "Service unavailable: the identity provider's keys cannot be fetched", { 'Retry-After': String(wait) }, 'idp_unavailable');
  }

  private fetch(): Promise<void> {
    this.lastAttempt = Date.now();
    this.inFlight = this.fetchSet()
      .then(
        () => this.events.fetched(this.settings.iss, 'ok'),
        (error: unknown) => {
          const outcome = error instanceof FetchFailed ? error.outcome : error instanceof Misconfigured ? 'issuer_mismatch' : 'malformed';
          const problem = error instanceof Error ? error.message : String(error);
          this.failingSince ??= Date.now();
          this.problem = problem;
          // A discovery document read again may name a new key URL.
          if ('discovery' in this.settings.keys) this.jwksUri = undefined;
          this.events.fetched(this.settings.iss, outcome);
          this.events.failed(this.settings.iss, problem);
        },
      )
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetchSet(): Promise<void> {
    const { createLocalJWKSet } = await jose();
    const timeout = this.timings.fetchTimeoutMs;
    if (this.jwksUri === undefined && 'discovery' in this.settings.keys)
      this.jwksUri = jwksUriOf(await fetchDocument(this.settings.keys.discovery, timeout), this);
    const fetched = await fetchDocument(this.jwksUri!, timeout);
    const set = keySetOf(fetched.json, this.jwksUri!);
    const text = JSON.stringify(set.keys);
    if (this.keys === undefined || this.keys.text !== text) this.generation++;
    const maxAge = Math.min(MAX_MAX_AGE, Math.max(MIN_MAX_AGE, fetched.maxAge ?? DEFAULT_MAX_AGE));
    const kinds = set.keys.map((key) => (key.crv ? `${key.kty} ${key.crv}` : String(key.kty)));
    this.keys = { resolve: createLocalJWKSet(set), text, freshUntil: Date.now() + maxAge * 1000, kinds };
    this.failingSince = undefined;
    this.problem = undefined;
    this.misconfigured = undefined;
  }
}

class Misconfigured extends Error {}

/** The key set URL of a discovery document, which must be the configured issuer's own (OpenID Connect Discovery §4.3). */
function jwksUriOf(document: FetchedDocument, keys: IssuerKeys): string {
  const json = document.json as { issuer?: unknown; jwks_uri?: unknown } | null;
  const url = keys.settings.keys as { discovery: string };
  if (typeof json !== 'object' || json === null) throw new FetchFailed('malformed', `${url.discovery} is not a discovery document`);
  if (json.issuer !== keys.settings.iss) {
    keys.misconfigured = `the discovery document ${url.discovery} names the issuer ${JSON.stringify(json.issuer)}, not ${JSON.stringify(keys.settings.iss)}`;
    throw new Misconfigured(keys.misconfigured);
  }
  if (typeof json.jwks_uri !== 'string') throw new FetchFailed('malformed', `${url.discovery} names no jwks_uri`);
  const problem = discoveredKeyUrlProblem(json.jwks_uri, url.discovery);
  if (problem !== undefined) throw new FetchFailed('malformed', `the jwks_uri of ${url.discovery} ${problem}: ${json.jwks_uri}`);
  return json.jwks_uri;
}

/**
 * Why the server may not fetch the key set a discovery document names: it must be https. The document steers
 * the fetch, so plain http to a loopback address, which the configuration may name for a provider beside the
 * server, is taken from a document only when the document itself was read over loopback http (that provider);
 * otherwise whoever answers for the provider could aim the server at any port of its own machine.
 */
export function discoveredKeyUrlProblem(jwksUri: string, discovery: string): string | undefined {
  const problem = keyUrlProblem(jwksUri);
  if (problem !== undefined) return problem;
  if (new URL(jwksUri).protocol === 'https:' || new URL(discovery).protocol === 'http:') return undefined;
  return 'is http, which only a discovery document read over http from this machine may name: use https';
}

function keySetOf(json: unknown, url: string): JSONWebKeySet {
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))) {
    throw new FetchFailed('malformed', `${url} is not a JSON Web Key Set`);
  }
  if (keys.length > MAX_KEYS) throw new FetchFailed('too_large', `${url} holds ${keys.length} keys, more than ${MAX_KEYS}`);
  if (keys.some((key) => PRIVATE_MEMBERS.some((member) => Object.hasOwn(key, member)))) {
    throw new FetchFailed('malformed', `${url} holds a private or secret key: refused`);
  }
  return { keys } as JSONWebKeySet;
}
