import type { LoginAttempt, LoginLimiter } from './limiter.js';

/**
 * One check within the login limits, begun and ended by exactly one outcome (limiter.ts): `succeeded` when `passed`
 * says so of its result, else `failed`. A check that threw did not run, and is `cancelled`, unless `refused` says
 * the throw is the check's own "no" (a 401), which counts as a failure. The doors that check something a client
 * sends (a password, an API key or a refresh token of a form anyone can make) all end their attempts here.
 */
export async function withinLimits<T>(
  limiter: LoginLimiter,
  attempt: LoginAttempt,
  check: () => Promise<T>,
  passed: (result: T) => boolean,
  refused: (error: unknown) => boolean = () => false,
): Promise<T> {
  await limiter.begin(attempt);
  let result: T;
  try {
    result = await check();
  } catch (error) {
    await (refused(error) ? limiter.failed(attempt) : limiter.cancelled(attempt));
    throw error;
  }
  await (passed(result) ? limiter.succeeded(attempt) : limiter.failed(attempt));
  return result;
}
