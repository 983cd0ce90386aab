import { IssuerKeyRing } from '../auth/issuer/index.js';
import { ApiKeys } from '../auth/keys/api-key.js';
import { DatabaseFailureStore } from '../auth/limits/failure-store.js';
import { LoginLimiter } from '../auth/limits/limiter.js';
import { CredentialCache } from '../auth/passwords/credential-cache.js';
import { Hashing } from '../auth/passwords/hashing.js';
import { JwtKey } from '../auth/tokens/jwt.js';
import { Revocations } from '../auth/tokens/revocations.js';
import type { BackendModule } from '../contract.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ServerOptions } from './options.js';

/**
 * The parts of authentication every backend shares, made once for the server's life and kept across reloads: the
 * token key, the credential cache, the bound on hashing, the revocations, the login limiter and the API keys.
 */
export function sharedAuth(options: ServerOptions, logger: Logger) {
  // Made when a Bearer backend first needs it: a short or missing secret refuses to start
  // (or to reload) rather than serve forgeable tokens.
  let key: JwtKey | null = null;
  const jwtKey = () => (key ??= new JwtKey(options.jwtSecret ?? ''));
  const keyFor = (backend: BackendModule) => (backend.authScheme === 'Bearer' ? jwtKey() : key);
  // One cache, one limiter and one bound on hashing for the server's life, shared by every backend: reloading
  // routes must not reset the count of failed logins, and a flood on one backend must not take every core.
  const cache = new CredentialCache();
  const hashing = new Hashing();
  const revocations = new Revocations(options.database, logger);
  const limiter = new LoginLimiter(options.loginLimits, options.loginCounters === 'database' ? new DatabaseFailureStore(options.database) : undefined);
  if ((options.revocationPollMs ?? 5000) > 0) void revocations.start(options.revocationPollMs ?? 5000);
  const apiKeys = new ApiKeys(options.database, logger, limiter);
  if ((options.revocationPollMs ?? 5000) > 0) apiKeys.start();
  return { jwtKey, keyFor, cache, hashing, revocations, limiter, apiKeys };
}

export type SharedAuth = ReturnType<typeof sharedAuth>;

/** Outside issuers' keys (docs/internals/contract.md §9): each fetch counted, each failure logged. */
export function issuerKeyRing(options: ServerOptions, logger: Logger, metrics: Metrics): IssuerKeyRing {
  const issuerKeys = new IssuerKeyRing(
    {
      fetched: (iss, outcome) => metrics.keyFetched(iss, outcome),
      failed: (iss, problem) => logger.warn({ issuer: iss, problem }, "identity provider's keys not fetched"),
    },
    options.issuerKeyTimings,
  );
  return issuerKeys;
}
