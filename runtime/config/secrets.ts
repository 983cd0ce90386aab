import { JwtKey } from '../auth/tokens/jwt.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../db/index.js';
import { MAKE_A_WEBHOOK_SECRET, parseWebhookSecrets } from '../events/index.js';
import { ConfigError } from './error.js';

// The settings that hold secrets (the database URL's password, JWT_SECRET, the webhooks'): checked in full at
// start, and no message about them ever holds the value.

/** How to make a JWT_SECRET, said wherever one is missing or too short. */
export const MAKE_A_SECRET = `node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))"`;

export function databaseUrlOf(url: string | undefined): string {
  const shape = 'mysql://user:password@host:3306/database';
  if (!url) {
    throw new Error(
      `DATABASE_URL is not set: set it to your MySQL or MariaDB database, ${shape}, in the environment or in .env beside package.json (npm run demo starts a private MariaDB and prints its URL)`,
    );
  }
  try {
    // Its TLS files are read and checked too: a missing ssl-ca stops the start, not the first request.
    parseDatabaseUrl(url);
  } catch (error) {
    // The parser's messages never hold the URL, whose password they would print.
    if (!(error instanceof DatabaseUrlError)) throw error;
    throw new ConfigError(
      error.shape ? error.problems.map((problem) => `${problem} (the form is ${shape}, or host1:3306,host2:3306 for a cluster)`) : error.problems,
    );
  }
  return url;
}

export function secretOf(secret: string | undefined, bearerBackends: readonly string[], pagedBackends: readonly string[]): string | undefined {
  if (!secret) {
    // A Bearer backend with pages needs it once, for its tokens: said once.
    const paged = pagedBackends.filter((backend) => !bearerBackends.includes(backend));
    const uses = [
      ...(bearerBackends.length > 0
        ? [
            bearerBackends.length === 1
              ? `backend ${bearerBackends[0]} signs and checks Bearer tokens with it`
              : `backends ${bearerBackends.slice(0, -1).join(', ')} and ${bearerBackends.at(-1)} sign and check Bearer tokens with it`,
          ]
        : []),
      ...(paged.length > 0 ? [`backend ${paged.join(', ')} signs the cursors of its pages with it`] : []),
    ];
    if (uses.length === 0) return undefined;
    throw new Error(`JWT_SECRET is not set: ${uses.join(', and ')}. Make one with ${MAKE_A_SECRET} and set JWT_SECRET to it in the environment or in .env`);
  }
  try {
    new JwtKey(secret);
  } catch (error) {
    throw new Error(`${(error as Error).message} (make one with ${MAKE_A_SECRET})`);
  }
  return secret;
}

/**
 * The secret of every webhook, from the variable its `secret` names: missing or malformed refuses the start,
 * naming the variable and the webhook, never the value.
 */
export function webhookSecretsOf(env: NodeJS.ProcessEnv, needs: readonly { variable: string; backend: string; url: string }[]): Record<string, string> {
  const secrets: Record<string, string> = {};
  const problems: string[] = [];
  for (const need of needs) {
    if (need.variable in secrets || problems.some((problem) => problem.startsWith(`${need.variable} `))) continue;
    const parsed = parseWebhookSecrets(env[need.variable]);
    if ('problem' in parsed)
      problems.push(
        `${need.variable} ${parsed.problem}: backend ${need.backend} signs its webhook ${need.url} with it. Make one with ${MAKE_A_WEBHOOK_SECRET}, set ${need.variable} to it in the environment or in .env, and give it to the receiver`,
      );
    else secrets[need.variable] = env[need.variable]!;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return secrets;
}
