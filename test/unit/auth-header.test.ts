import { describe, expect, it } from 'vitest';
import { parseAuthorization } from '../../runtime/auth/header.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('parseAuthorization', () => {
  it('decodes Basic with and without padding, in any case of the scheme word', () => {
    const padded = b64('ab:c');
    expect(padded.endsWith('=')).toBe(true);
    for (const header of [`Basic ${padded}`, `Basic ${padded.replace(/=+$/, '')}`, `basic ${padded}`, `BASIC   ${padded}`]) {
      expect(parseAuthorization(header)).toEqual({ scheme: 'basic', user: 'ab', pass: 'c' });
    }
  });

  it('splits at the first colon and decodes UTF-8', () => {
    expect(parseAuthorization(`Basic ${b64('zoë:a:b:c')}`)).toEqual({ scheme: 'basic', user: 'zoë', pass: 'a:b:c' });
    expect(parseAuthorization(`Basic ${b64('user:')}`)).toEqual({ scheme: 'basic', user: 'user', pass: '' });
  });

  it('refuses malformed Basic values', () => {
    for (const header of ['Basic', 'Basic ', `Basic ${b64('nocolon')}`, 'Basic ***', 'Basic a', `Basic ${b64('a:b')}===`]) {
      expect(parseAuthorization(header), header).toBeUndefined();
    }
    expect(parseAuthorization('Basic ' + Buffer.from([0xc3, 0x28, 0x3a, 0x61]).toString('base64'))).toBeUndefined();
  });

  it('takes Bearer tokens with the prefix and bare, and refuses non-JWT shapes', () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_-';
    expect(parseAuthorization(`Bearer ${token}`)).toEqual({ scheme: 'bearer', token });
    expect(parseAuthorization(`bearer ${token}`)).toEqual({ scheme: 'bearer', token });
    expect(parseAuthorization(token)).toEqual({ scheme: 'bearer', token });
    for (const header of ['Bearer', 'Bearer abc', 'abc', 'Bearer a.b.c.d', 'Token a.b.c', '', 'Bearer a b.c']) {
      expect(parseAuthorization(header), header).toBeUndefined();
    }
  });

  it('never throws, and round-trips every Basic pair (5,000 seeded random cases)', () => {
    // A small deterministic generator: the same cases on every run.
    let seed = 0x5eed;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed >>> 16);
    const alphabet = 'Basic Bearer bearer:=+/._-\u00e9\u0000 \tAaZz09';
    let roundTrips = 0;
    for (let i = 0; i < 5000; i++) {
      const length = next() % 40;
      let text = '';
      for (let j = 0; j < length; j++) text += alphabet[next() % alphabet.length];
      expect(() => parseAuthorization(text)).not.toThrow();
      const colon = text.indexOf(':');
      const result = parseAuthorization(`Basic ${b64(text)}`);
      if (colon === -1) {
        expect(result).toBeUndefined();
      } else {
        expect(result).toEqual({ scheme: 'basic', user: text.slice(0, colon), pass: text.slice(colon + 1) });
        roundTrips++;
      }
    }
    expect(roundTrips).toBeGreaterThan(1000);
  });
});
