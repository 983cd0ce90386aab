import { describe, expect, it } from 'vitest';
import { nameParts, passwordLikeColumn, secretWord } from '../../generator/secrets.js';
import { scanSql } from '../../generator/sql/index.js';
import { columnsMet, namedTokens } from '../../generator/sql/meets.js';

/** Which parameters are secrets (generator/secrets.ts): by name, on whole parts, and by the column they meet. */
describe('a secret by its name', () => {
  it('splits snake, kebab and camel case into lower-case parts, trailing digits dropped', () => {
    expect(nameParts('newPIN_code')).toEqual(['new', 'pin', 'code']);
    expect(nameParts('APIKey')).toEqual(['api', 'key']);
    expect(nameParts('X-API-KEY')).toEqual(['x', 'api', 'key']);
    expect(nameParts('cvv2')).toEqual(['cvv']);
    expect(nameParts('2fa')).toEqual(['2fa']);
  });

  it('finds the secrets named otherwise, in any case', () => {
    for (const name of [
      ...['pw', 'PW', 'pin', 'cardPIN', 'pin_code', 'otp', 'otpCode', 'totp', 'cvv', 'cvv2', 'CVC', 'cvn', 'ssn', 'mfa_code', '2fa'],
      ...['password', 'Pass_Word', 'newPassword', 'newpassword', 'passwd', 'pwd', 'old_pwd', 'pass', 'passphrase', 'passcode'],
      ...['secret', 'client_secret', 'ClientSecret', 'clientsecret', 'token', 'access_token', 'refreshToken', 'accesstoken'],
      ...['api_key', 'apiKey', 'apikey', 'X-API-KEY', 'key', 'private_key', 'secretKey', 'session_id', 'sessionId'],
      ...['card_number', 'cardNumber', 'cardnumber', 'cc_num', 'credit_card', 'security_code', 'verification_code'],
      ...['auth', 'authorization', 'credentials', 'signature', 'cookie', 'jwt'],
      // Two words run together (the review of issue 40).
      ...['privatekey', 'accesskey', 'awsSecretAccesskey', 'pincode', 'authcode', 'otpcode'],
    ]) {
      expect(secretWord(name), name).toBeDefined();
    }
  });

  it('leaves words that merely hold one alone: spin, pinned, opinion, keyword, author, compass', () => {
    for (const name of [
      ...['spin', 'spinner', 'pinned', 'is_pinned', 'opinion', 'pinyin', 'keyword', 'keywords', 'monkey', 'author', 'authorId', 'compass'],
      ...['bypass', 'passenger', 'passport', 'sort_key', 'key_id', 'idempotency_key', 'secretary', 'max_tokens', 'hotpot', 'shopping'],
      ...['name', 'user', 'email', 'quantity', 'product_id', 'status', 'q', 'id', 'label', 'code', 'number', 'topt'],
    ]) {
      expect(secretWord(name), name).toBeUndefined();
    }
  });

  it('takes a column named like a password, secret, token or hash as a password column', () => {
    for (const column of ['pass_word', 'password', 'pin_hash', 'pwhash', 'hashed_secret', 'api_token', 'hash'])
      expect(passwordLikeColumn(column), column).toBe(true);
    for (const column of ['name', 'label', 'note', 'phrase', 'hashtag']) expect(passwordLikeColumn(column), column).toBe(false);
  });
});

describe('the columns a parameter meets', () => {
  const met = (sql: string) => {
    const scanned = scanSql(sql);
    const tokens = namedTokens(
      scanned.sql,
      scanned.placeholders.map((placeholder) => (placeholder.kind === 'param' ? placeholder.name : null)),
    )!;
    return Object.fromEntries([...columnsMet(tokens)].map(([name, columns]) => [name, columns.map((column) => `${column.table}.${column.column}`)]));
  };

  it('through the functions around it, on either side of the comparison', () => {
    expect(met('update usr set pass_word = sha2($pw, 256) where user_id = $uid')).toEqual({ pw: ['usr.pass_word'] });
    expect(met('select 1 from t where sha2(concat(salt, $pw), 256) = t.secret_hash and name = $name')).toEqual({
      pw: ['t.secret_hash'],
      name: ['t.name'],
    });
    expect(met('select 1 from t where word in ($a, sha2($b))')).toEqual({ a: ['t.word'], b: ['t.word'] });
    expect(met('select length($x) > 0 as ok')).toEqual({ x: [] });
  });

  it("to an insert's columns, bare or inside a function, row after row", () => {
    expect(met('insert into cards (label, pin_hash) values ($label, sha2(concat($salt, $pin), 256))')).toEqual({
      label: ['cards.label'],
      salt: ['cards.pin_hash'],
      pin: ['cards.pin_hash'],
    });
    expect(met('insert into t (a, b) values ($a1, $b1), ($a2, $b2)')).toEqual({ a1: ['t.a'], b1: ['t.b'], a2: ['t.a'], b2: ['t.b'] });
  });
});
