import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { LEFT_OUT, recordedAddress, recordedParams, statusFilter, timeFilter } from '../../runtime/audit/index.js';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { parseWebhookSecrets, retryDelay } from '../../runtime/events/index.js';
import { signature } from '../../runtime/events/signer.js';

/**
 * The pure parts of events and audit (docs/internals/contract.md §12): signatures as the Standard Webhooks reference
 * implementation computes and verifies them, secrets, the retry schedule, which parameters the audit leaves
 * out, and the EVENTS_* settings. Delivery itself is tested over HTTP (test/integration/events.test.ts).
 */
const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
const keysOf = (value: string) => {
  const parsed = parseWebhookSecrets(value);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.keys;
};

describe('signatures', () => {
  it('are what standardwebhooks signs, and it verifies them, for any body', () => {
    const secret = secretOf(32);
    const reference = new Webhook(secret);
    for (const body of ['{}', '{"type":"order.placed","data":{"note":"naïve ✓ \\u2028"}}', JSON.stringify({ long: 'x'.repeat(70_000) })]) {
      const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
      const timestamp = Math.floor(Date.now() / 1000);
      const ours = signature(keysOf(secret), id, timestamp, body);
      expect(ours).toBe(reference.sign(id, new Date(timestamp * 1000), body));
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': ours };
      expect(() => reference.verify(body, headers)).not.toThrow();
      // One changed byte of the body, the id or the time, and it no longer verifies.
      expect(() => reference.verify(`${body} `, headers)).toThrow('No matching signature found');
      expect(() => reference.verify(body, { ...headers, 'webhook-id': `${id}x` })).toThrow('No matching signature found');
      expect(() => reference.verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) })).toThrow('No matching signature found');
    }
  });

  it('carry one signature per secret while a secret is rotated, so that a receiver knowing either verifies', () => {
    const [newer, older] = [secretOf(32), secretOf(24)];
    const header = signature(keysOf(`${newer} ${older}`), 'msg_a', 1_700_000_000, '{"a":1}');
    expect(header.split(' ')).toHaveLength(2);
    for (const secret of [newer, older]) {
      // standardwebhooks refuses old timestamps: verify the signature it would make for that time.
      expect(header.split(' ')).toContain(new Webhook(secret).sign('msg_a', new Date(1_700_000_000_000), '{"a":1}'));
    }
  });
});

describe('webhook secrets', () => {
  it('are whsec_ and canonical base64 of 24 to 64 bytes, several separated by spaces', () => {
    expect(keysOf(secretOf(24))).toHaveLength(1);
    expect(keysOf(secretOf(64))[0]).toHaveLength(64);
    expect(keysOf(`  ${secretOf(32)}   ${secretOf(48)} `)).toHaveLength(2);
  });

  it('are refused with a reason that never quotes the value', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'is not set'],
      ['', 'is not set'],
      ['hunter2-but-longer-than-24-bytes-for-sure', 'should be whsec_ followed by base64'],
      [secretOf(23), 'holds 23 bytes, not 24 to 64'],
      [secretOf(65), 'holds 65 bytes, not 24 to 64'],
      [`whsec_${randomBytes(32).toString('base64url')}!`, 'should be whsec_ followed by base64'],
      [`${secretOf(32)} nope`, 'its secret number 2 should be whsec_'],
    ];
    for (const [value, reason] of cases) {
      const parsed = parseWebhookSecrets(value);
      expect('problem' in parsed && parsed.problem, value).toContain(reason);
      // No run of the value's characters: only words of the message.
      expect((parsed as { problem: string }).problem, value).not.toMatch(/[A-Za-z0-9+/=!-]{20,}/);
    }
  });
});

describe('the retry schedule', () => {
  const settings = { retryBaseMs: 5000, retryMaxMs: 3_600_000 };
  it('doubles from the base up to the cap, each delay between half and all of its bound (equal jitter)', () => {
    expect(retryDelay(1, settings, () => 0)).toBe(2500);
    expect(retryDelay(1, settings, () => 1)).toBe(5000);
    expect(retryDelay(2, settings, () => 1)).toBe(10_000);
    expect(retryDelay(5, settings, () => 0.5)).toBe(60_000);
    expect(retryDelay(30, settings, () => 1)).toBe(3_600_000);
    expect(retryDelay(30, settings, () => 0)).toBe(1_800_000);
    expect(retryDelay(10_000, settings, () => 1)).toBe(3_600_000);
  });

  it('makes about three dozen attempts in 24 hours with the defaults (an hour apart at most)', () => {
    let elapsed = 0;
    let attempts = 1;
    while (elapsed + retryDelay(attempts, settings, () => 0.75) < 86_400_000) elapsed += retryDelay(attempts++, settings, () => 0.75);
    expect(attempts).toBeGreaterThanOrEqual(30);
    expect(attempts).toBeLessThanOrEqual(45);
  });
});

describe('the audit', () => {
  it("keeps only the values its module's rule names, whatever the names (the rule is the generator's, generator/secrets.ts)", () => {
    const keeps = new Set(['user', 'qty']);
    expect(JSON.parse(recordedParams({ user: 'ann', qty: 2, pw: 'hunter2', keyword: 'shoes' }, keeps)!)).toEqual({
      user: 'ann',
      qty: 2,
      pw: LEFT_OUT,
      keyword: LEFT_OUT,
    });
    // A module without a rule keeps no value.
    expect(JSON.parse(recordedParams({ user: 'ann' }, new Set())!)).toEqual({ user: LEFT_OUT });
  });

  it('holds a bounded record whatever the request carried: no value over 256 characters, the whole at most 4 KB', () => {
    const huge = 'x'.repeat(1_000_000);
    const one = recordedParams({ body: huge }, new Set(['body']))!;
    expect(one.length).toBeLessThan(300);
    const many = recordedParams(
      Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, huge])),
      new Set(Array.from({ length: 1000 }, (_, i) => `p${i}`)),
    )!;
    expect(many.length).toBeLessThanOrEqual(4096);
  });

  it('records an address as printable ASCII the column takes, at most 64 characters', () => {
    expect(recordedAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(recordedAddress('\u00e9\u0000x')).toBe('??x');
    expect(recordedAddress('a'.repeat(100))).toHaveLength(64);
    expect(recordedAddress('')).toBe('-');
  });

  it('reads the status and time filters of the console and xmlrest audit list alike', () => {
    expect(statusFilter('404')).toEqual({ status: 404 });
    expect(statusFilter('4xx')).toEqual({ statusClass: 4 });
    expect(statusFilter('44')).toBeUndefined();
    expect(timeFilter('2026-11-26T10:00')).toEqual(new Date('2026-11-26T10:00Z'));
    expect(timeFilter('30m', 1_800_000)).toEqual(new Date(0));
    expect(timeFilter('yesterday')).toBeUndefined();
  });

  it('records parameters with secrets left out, long values cut and the whole bounded', () => {
    expect(recordedParams(null, new Set())).toBeNull();
    expect(
      JSON.parse(
        recordedParams({ user: 'bob', pass: 'hunter2', n: 3, at: new Date('2026-01-02T03:04:05Z'), none: null }, new Set(['user', 'n', 'at', 'none']))!,
      ),
    ).toEqual({
      user: 'bob',
      pass: LEFT_OUT,
      n: 3,
      at: '2026-01-02T03:04:05.000Z',
      none: null,
    });
    expect(JSON.parse(recordedParams({ note: 'x'.repeat(1000) }, new Set(['note']))!).note).toBe(`${'x'.repeat(256)}…`);
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`field${i}`, 'y'.repeat(200)]));
    const bounded = recordedParams(many, new Set(Object.keys(many)))!;
    expect(bounded.length).toBeLessThanOrEqual(4096);
    expect(JSON.parse(bounded)).toMatchObject({ truncated: true });
  });
});

describe('EVENTS_* and webhook secrets in the configuration', () => {
  const load = (env: Record<string, string>, needs = {}) => loadConfig({ DATABASE_URL: 'mysql://u:p@h/d', ...env }, '.env', needs);
  const hook = { variable: 'SHOP_HOOK_SECRET', backend: 'shop', url: 'https://hooks.example.com/in' };

  it('default to production timings: a 10 s cut, a 60 s lease, retries for 24 h, delivered events kept 7 days', () => {
    expect(load({}).events).toEqual({
      deliver: true,
      maxBytes: 65_536,
      delivery: {
        pollMs: 1000,
        leaseSeconds: 60,
        timeoutMs: 10_000,
        retryBaseMs: 5000,
        retryMaxMs: 3_600_000,
        retryWindowSeconds: 86_400,
        retentionSeconds: 604_800,
        concurrency: 16,
      },
    });
    expect(load({ EVENTS_DELIVERY: 'off', EVENTS_TIMEOUT_MS: '500', EVENTS_LEASE_SECONDS: '2' }).events).toMatchObject({
      deliver: false,
      delivery: { timeoutMs: 500, leaseSeconds: 2 },
    });
  });

  it('refuse a lease shorter than three attempts (one waiting in the queue, its own, its outcome), and values out of bounds', () => {
    expect(() => load({ EVENTS_LEASE_SECONDS: '29' })).toThrow(/EVENTS_LEASE_SECONDS \(29\) must be at least three times EVENTS_TIMEOUT_MS \(10000 ms\)/);
    expect(load({ EVENTS_LEASE_SECONDS: '30' }).events.delivery.leaseSeconds).toBe(30);
    expect(() => load({ EVENTS_DELIVERY: 'maybe' })).toThrow(/EVENTS_DELIVERY is on or off, not maybe/);
    expect(() => load({ EVENTS_CONCURRENCY: '0' })).toThrow(/EVENTS_CONCURRENCY is 1 to 256, not 0/);
    expect(() => load({ EVENTS_MAX_BYTES: '99999999' })).toThrow(/EVENTS_MAX_BYTES is 1024 to 1048576/);
  });

  it('read every webhook secret, and refuse a missing or malformed one naming the variable and the webhook, never the value', () => {
    const secret = secretOf(32);
    expect(load({ SHOP_HOOK_SECRET: secret }, { webhookSecrets: [hook, hook] }).webhookSecrets).toEqual({ SHOP_HOOK_SECRET: secret });
    expect(() => load({}, { webhookSecrets: [hook] })).toThrow(ConfigError);
    expect(() => load({}, { webhookSecrets: [hook] })).toThrow(
      /SHOP_HOOK_SECRET is not set: backend shop signs its webhook https:\/\/hooks.example.com\/in with it/,
    );
    const malformed = 'whsec_c2hvcnQ=';
    let message = '';
    try {
      load({ SHOP_HOOK_SECRET: malformed }, { webhookSecrets: [hook] });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('SHOP_HOOK_SECRET is not a Standard Webhooks secret');
    expect(message).toContain("require('node:crypto').randomBytes(32)");
    expect(message).not.toContain('c2hvcnQ');
  });
});
