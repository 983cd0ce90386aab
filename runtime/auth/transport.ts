import type Koa from 'koa';
import { HttpError } from '../errors.js';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/**
 * Credentials over plain HTTP from another host could be read on the way:
 * with REQUIRE_TLS_FOR_CREDENTIALS they are refused (403), wherever they
 * come in (an Authorization header, a token request).
 */
export function refuseInsecureCredentials(ctx: Koa.Context): void {
  if (!ctx.secure && !LOOPBACK.test(ctx.ip)) throw new HttpError(403, 'Credentials must be sent over HTTPS', {}, 'insecure_transport');
}
