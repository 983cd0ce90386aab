import { describe, expect, it } from 'vitest';
import { checkUserName, RESERVED_USER_PREFIX } from '../../console/names.js';

describe('user names', () => {
  it("refuses verify-access's prefix, whatever its case, so that no account of anyone else's is ever taken for its leftover", () => {
    for (const name of [`${RESERVED_USER_PREFIX}1a2b3c-1`, 'XMLREST-VERIFY-anything', 'xmlrest-verify-']) {
      expect(checkUserName(name)).toEqual({ ok: false, message: expect.stringContaining('verify-access') });
    }
    expect(checkUserName('xmlrest-verifier')).toEqual({ ok: true, name: 'xmlrest-verifier' });
  });
});
