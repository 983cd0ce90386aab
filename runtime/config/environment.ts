import { type BackendModule, environmentReference, type IssuerSettings, keyUrlProblem, type WebhookSettings, webhookUrlProblem } from '../contract.js';
import { ConfigError } from './error.js';

// Settings per environment (docs/internals/contract.md §7): the `${NAME}` a generated module keeps for an Issuer's iss,
// jwks_uri or discovery and a Webhook's url, resolved once at start, so that everything after (the guard, the key
// ring, the outbox, the console) sees values only. Each value is checked as the generator checks one written out;
// no message holds a value (a URL may carry a token in its query).

/** An iss as the generator takes one: not empty, no spaces at either end. */
const issProblem = (value: string) => (value.trim() === value ? undefined : 'has spaces at either end: an iss is matched exactly as tokens carry it');

/**
 * The backends with every reference replaced by its variable's value; a backend without references is returned as
 * it is. A variable unset or empty, or whose value fails its attribute's checks, is a ConfigError naming the
 * variable, the attribute and the backend, all of them in one.
 */
export function resolveEnvironment(backends: readonly BackendModule[], env: NodeJS.ProcessEnv): BackendModule[] {
  const problems: string[] = [];
  const resolved = backends.map((backend) => {
    if (!usesReferences(backend)) return backend;
    const value = (written: string, what: string, problem: (value: string) => string | undefined): string => {
      const variable = environmentReference(written);
      if (variable === undefined) return written;
      const given = env[variable];
      const use = `backend ${backend.name}'s ${what} is \${${variable}}`;
      if (given === undefined || given === '') {
        problems.push(`${variable} is not set: ${use}. Set it in the environment or in .env`);
        return written;
      }
      const wrong = problem(given);
      if (wrong !== undefined) problems.push(`${variable} ${wrong} (${use})`);
      return given;
    };
    // The Issuer is named as written: its iss may be a reference too, and no message shows a value.
    const issuers = backend.issuers.map(
      (issuer): IssuerSettings => ({
        ...issuer,
        iss: value(issuer.iss, 'Issuer iss', issProblem),
        keys:
          'jwksUri' in issuer.keys
            ? { jwksUri: value(issuer.keys.jwksUri, `Issuer ${issuer.iss} jwks_uri`, keyUrlProblem) }
            : { discovery: value(issuer.keys.discovery, `Issuer ${issuer.iss} discovery`, keyUrlProblem) },
      }),
    );
    // Two Issuers of one backend with one iss: the generator refuses it written out, the server when a value makes it.
    issuers.forEach((issuer, index) => {
      const first = issuers.findIndex((other) => other.iss === issuer.iss);
      if (first < index)
        problems.push(
          `backend ${backend.name}'s Issuers ${backend.issuers[first]!.iss} and ${backend.issuers[index]!.iss} have one iss: give one Issuer every audience it serves`,
        );
    });
    const webhooks = backend.webhooks?.map((webhook): WebhookSettings => ({ ...webhook, url: value(webhook.url, 'Webhook url', webhookUrlProblem) }));
    webhooks?.forEach((webhook, index) => {
      const first = webhooks.findIndex((other) => other.url === webhook.url);
      if (first < index)
        problems.push(
          `backend ${backend.name}'s Webhooks ${backend.webhooks![first]!.url} and ${backend.webhooks![index]!.url} send to one url: give one Webhook every event type`,
        );
    });
    return { ...backend, issuers, ...(webhooks ? { webhooks } : {}) };
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return resolved;
}

/** Whether a backend names any environment variable in the settings that may. */
export function usesReferences(backend: BackendModule): boolean {
  const written = [
    ...backend.issuers.flatMap((issuer) => [issuer.iss, 'jwksUri' in issuer.keys ? issuer.keys.jwksUri : issuer.keys.discovery]),
    ...(backend.webhooks ?? []).map((webhook) => webhook.url),
  ];
  return written.some((value) => environmentReference(value) !== undefined);
}
