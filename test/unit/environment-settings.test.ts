import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, resolveEnvironment } from '../../runtime/config.js';
import { backend } from '../golden/environment-settings/expected/app/index.js';

/**
 * Settings per environment (docs/internals/contract.md §7): the generated module of the golden case environment-settings
 * keeps `${NAME}` for two issuers' settings and a webhook's url; the server reads them at start.
 */
const production = {
  OIDC_ISSUER: 'https://sso.example.com/realms/prod',
  OIDC_DISCOVERY: 'https://sso.example.com/realms/prod/.well-known/openid-configuration',
  PARTNER_JWKS_URI: 'https://login.example.com/keys?token=s3cret-in-query',
  ORDERS_HOOK_URL: 'https://hooks.example.com/orders?key=hook-s3cret',
};
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    resolveEnvironment([backend], env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
};

describe('references to environment variables, resolved at start', () => {
  it('gives every consumer the values, and leaves the generated module as written', () => {
    const [resolved] = resolveEnvironment([backend], production);
    expect(resolved!.issuers.map((issuer) => [issuer.iss, issuer.keys])).toEqual([
      [production.OIDC_ISSUER, { discovery: production.OIDC_DISCOVERY }],
      ['https://login.example.com/', { jwksUri: production.PARTNER_JWKS_URI }],
    ]);
    expect(resolved!.webhooks!.map((webhook) => webhook.url)).toEqual([production.ORDERS_HOOK_URL]);
    expect(backend.issuers[0]!.iss).toBe('${OIDC_ISSUER}');
    expect(backend.webhooks![0]!.url).toBe('${ORDERS_HOOK_URL}');
  });

  it('refuses a variable unset or empty, naming it, the attribute and the backend, all in one', () => {
    const problems = problemsOf({ ...production, OIDC_ISSUER: '', ORDERS_HOOK_URL: undefined as unknown as string });
    expect(problems).toEqual([
      "OIDC_ISSUER is not set: backend app's Issuer iss is ${OIDC_ISSUER}. Set it in the environment or in .env",
      "ORDERS_HOOK_URL is not set: backend app's Webhook url is ${ORDERS_HOOK_URL}. Set it in the environment or in .env",
    ]);
  });

  it('checks a value as the generator checks one written out, and never prints it', () => {
    const problems = problemsOf({
      OIDC_ISSUER: ' https://sso.example.com/ ',
      OIDC_DISCOVERY: 'http://sso.example.com/?token=s3cret-in-query',
      PARTNER_JWKS_URI: 'not a url s3cret',
      ORDERS_HOOK_URL: 'https://user:hook-s3cret@hooks.example.com/',
    });
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/^OIDC_ISSUER has spaces at either end.*\(backend app's Issuer iss is \$\{OIDC_ISSUER\}\)$/);
    expect(problems[1]).toMatch(/^OIDC_DISCOVERY is http to a host that is not loopback: use https \(backend app's Issuer \$\{OIDC_ISSUER\} discovery/);
    expect(problems[2]).toMatch(/^PARTNER_JWKS_URI is not a URL \(backend app's Issuer https:\/\/login.example.com\/ jwks_uri/);
    expect(problems[3]).toMatch(/^ORDERS_HOOK_URL holds credentials/);
    expect(problems.join('\n')).not.toMatch(/s3cret|sso\.example|hooks\.example/);
  });

  it('refuses two issuers that a value gives one iss', () => {
    expect(problemsOf({ ...production, OIDC_ISSUER: 'https://login.example.com/' })).toEqual([
      "backend app's Issuers ${OIDC_ISSUER} and https://login.example.com/ have one iss: give one Issuer every audience it serves",
    ]);
  });

  it('is reported by loadConfig with the other settings', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:p@h/d', PORT: 'x', ...production, OIDC_ISSUER: '' }, '.env', { backends: [backend] })).toThrow(
      /PORT[\s\S]*OIDC_ISSUER is not set/,
    );
    const config = loadConfig({ DATABASE_URL: 'mysql://u:p@h/d', ...production }, '.env', { backends: [backend] });
    expect(config.backends[0]!.issuers[0]!.iss).toBe(production.OIDC_ISSUER);
  });
});
