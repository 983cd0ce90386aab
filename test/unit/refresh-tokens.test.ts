import { createSecretKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REFRESH_TOKEN } from '../../generator/openapi/tokens.js';
import { REFRESH_TOKEN_PATTERN, RefreshTokens } from '../../runtime/auth/sessions/refresh-tokens.js';

const key = (text: string) => createSecretKey(Buffer.from(text.padEnd(32, '.')));

describe('refresh tokens', () => {
  it('are made with a tag only the deployment makes, and told apart from made-up and untagged ones before any query', () => {
    const tokens = new RefreshTokens([key('one')]);
    const made = tokens.make();
    expect(made).toMatch(/^xrr_[0-9A-Za-z]{54}$/);
    expect(tokens.formOf(made)).toBe('current');
    // Another deployment's, or one whose tag is guessed: refused unread.
    expect(new RefreshTokens([key('two')]).formOf(made)).toBe('malformed');
    const last = made.at(-1) === 'a' ? 'b' : 'a';
    expect(tokens.formOf(made.slice(0, -1) + last)).toBe('malformed');
    // The form made before tags: looked up, within the failed-login limits.
    expect(tokens.formOf(made.slice(0, -11))).toBe('legacy');
    for (const other of ['', 'xrr_', 'xrr_not-a-token', `${made}a`, `xr_${made.slice(4)}`]) expect(tokens.formOf(other)).toBe('malformed');
  });

  it('pass under any key of a rotation, and are made under the signing one', () => {
    const before = new RefreshTokens([key('old')]).make();
    const rotated = new RefreshTokens([key('new'), key('old')]);
    expect(rotated.formOf(before)).toBe('current');
    expect(new RefreshTokens([key('new')]).formOf(rotated.make())).toBe('current');
  });

  it('are described in OpenAPI as the server takes them', () => {
    expect(REFRESH_TOKEN.pattern).toBe(REFRESH_TOKEN_PATTERN);
  });
});
