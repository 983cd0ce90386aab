import { describe, expect, it } from 'vitest';
import { tenantOf } from '../../runtime/auth/issuer/claims.js';
import { JwtKey, signToken, verifyToken } from '../../runtime/auth/tokens/jwt.js';
import type { BackendModule, IssuerSettings, TenantSettings } from '../../runtime/contract.js';
import type { Database } from '../../runtime/db/index.js';
import { Events } from '../../runtime/events/index.js';
import { createLogger } from '../../runtime/index.js';
import { CursorKey } from '../../runtime/lists/cursor.js';
import { Lists } from '../../runtime/lists/index.js';
import { canonicalTenant } from '../../runtime/tenants/index.js';
import { sampleMetrics } from '../../scripts/docs/metrics.js';

/** Each caller's tenant, where it is read (docs/internals/contract.md §14): its canonical text, an issuer's claim, a token's `ten`. */
describe('canonicalTenant', () => {
  it('takes an integer tenant as its canonical text within unsigned 64 bits, from text, a number or a bigint column', () => {
    expect(canonicalTenant('integer', '0')).toBe('0');
    expect(canonicalTenant('integer', '42')).toBe('42');
    expect(canonicalTenant('integer', 42)).toBe('42');
    expect(canonicalTenant('integer', 0)).toBe('0');
    expect(canonicalTenant('integer', 18446744073709551615n)).toBe('18446744073709551615');
    expect(canonicalTenant('integer', '18446744073709551615')).toBe('18446744073709551615');
  });

  it('refuses anything else as an integer tenant: none, signs, leading zeros, spaces, fractions, past 64 bits', () => {
    for (const value of [
      undefined,
      null,
      '',
      '-1',
      '+1',
      '01',
      ' 1',
      '1 ',
      '1.0',
      '1e3',
      '0x10',
      '١',
      '18446744073709551616',
      '99999999999999999999',
      '123456789012345678901',
      -1,
      1.5,
      Number.NaN,
      2 ** 64,
      18446744073709551616n,
      -1n,
      true,
      {},
      [],
    ]) {
      expect(canonicalTenant('integer', value), String(value)).toBeUndefined();
    }
  });

  it('takes a text tenant as it is, non-empty and at most 255 characters; nothing that is not a string', () => {
    expect(canonicalTenant('text', 'acme')).toBe('acme');
    expect(canonicalTenant('text', 'é'.repeat(255))).toBe('é'.repeat(255));
    expect(canonicalTenant('text', '')).toBeUndefined();
    expect(canonicalTenant('text', 'a'.repeat(256))).toBeUndefined();
    expect(canonicalTenant('text', 7)).toBeUndefined();
    // PAD SPACE collations take 'acme ' for 'acme': a tenant that ends in a space is none.
    expect(canonicalTenant('text', 'acme ')).toBeUndefined();
    expect(canonicalTenant('text', ' acme')).toBe(' acme');
    expect(canonicalTenant('text', null)).toBeUndefined();
  });
});

describe("an outside issuer's tenant claim", () => {
  const issuer = (tenant?: string[]): IssuerSettings => ({
    iss: 'https://issuer.example',
    audience: ['api'],
    keys: { jwksUri: 'https://issuer.example/jwks' },
    algorithms: ['ES256'],
    clockSkew: 30,
    roles: { path: ['roles'], format: 'array' },
    roleMap: [],
    mapOnly: false,
    user: ['sub'],
    userQuery: null,
    ...(tenant === undefined ? {} : { tenant }),
  });
  const integer = { tenant: { column: 'org_id', type: 'integer', userQuery: null } satisfies TenantSettings };
  const text = { tenant: { column: 'org', type: 'text', userQuery: null } satisfies TenantSettings };

  it('is read at its path, as the user claim is, canonical for the tenant type', () => {
    expect(tenantOf({ org: '7' }, issuer(['org']), integer)).toBe('7');
    expect(tenantOf({ org: 7 }, issuer(['org']), integer)).toBe('7');
    expect(tenantOf({ ext: { org: 'acme' } }, issuer(['ext', 'org']), text)).toBe('acme');
  });

  it('is none when absent, of another type, not canonical, inherited, or when the issuer or backend names none', () => {
    expect(tenantOf({}, issuer(['org']), integer)).toBeUndefined();
    expect(tenantOf({ org: '07' }, issuer(['org']), integer)).toBeUndefined();
    expect(tenantOf({ org: ['7'] }, issuer(['org']), integer)).toBeUndefined();
    expect(tenantOf({ org: 'acme' }, issuer(['org']), integer)).toBeUndefined();
    expect(tenantOf({ org: '' }, issuer(['org']), text)).toBeUndefined();
    expect(tenantOf(Object.create({ org: '7' }), issuer(['org']), integer)).toBeUndefined();
    expect(tenantOf({ org: '7' }, issuer(), integer)).toBeUndefined();
    expect(tenantOf({ org: '7' }, issuer(['org']), {})).toBeUndefined();
  });
});

describe("the backend's own token's ten", () => {
  const key = new JwtKey('unit-secret-0123456789-0123456789-abcdef');
  const settings = { issuer: 'api', backend: 'crm', lifetime: 3600, iatUnit: 's' as const };
  const options = { issuer: 'api', backend: 'crm', clockSkew: 0, lifetime: 3600, isUid: () => true };

  it('is signed at issue and read back; a token issued without one carries none', () => {
    expect(verifyToken(key, signToken(key, settings, { sub: '5', aud: 'member', ten: '3' }), options).ten).toBe('3');
    const without = signToken(key, settings, { sub: '5', aud: 'member' });
    expect(JSON.parse(Buffer.from(without.split('.')[1]!, 'base64url').toString('utf8'))).not.toHaveProperty('ten');
    expect(verifyToken(key, without, options).ten).toBeUndefined();
  });
});

describe('what carries the tenant', () => {
  it("binds a page's cursor to the caller's tenant: another tenant's cursor is a 400, the same tenant's opens", () => {
    const cursors = new CursorKey(new JwtKey('unit-secret-0123456789-0123456789-abcdef').all);
    const lists = new Lists(() => cursors);
    const spec = {
      sql: 'select note_id from note where org_id = ?',
      where: true,
      tail: '',
      filters: [],
      sort: null,
      page: { size: 1, max: 10, key: [{ sql: 'note_id', column: 'note_id', desc: false, type: 'number' as const }] },
    };
    const request = (tenant: string) => ({ route: 'crm notes GET', user: '5', tenant, path: '/crm/v1.0/notes', link: () => undefined });
    const first = lists.open(spec, {}, request('1'));
    first.page([{ note_id: 1 }, { note_id: 2 }]);
    const after = first.next!;
    expect(() => lists.open(spec, { after }, request('1'))).not.toThrow();
    expect(() => lists.open(spec, { after }, request('2'))).toThrow(expect.objectContaining({ status: 400 }));
  });

  it("puts the tenant in an event's payload when a tenant backend's route emits it, and nothing when none", () => {
    const events = new Events({
      database: {} as Database,
      logger: createLogger('silent'),
      registry: sampleMetrics().registry,
      secrets: { HOOK_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}` },
      deliver: false,
      serverId: 'test',
    });
    events.configure([{ name: 'crm', webhooks: [{ events: ['note.*'], url: 'https://hooks.example/x', secret: 'HOOK_SECRET' }] } as unknown as BackendModule]);
    const [withTenant] = events.event('crm', 'note.added', { id: 1 }, 1, '7');
    expect(JSON.parse(withTenant!.payload)).toMatchObject({ type: 'note.added', key: 1, tenant: '7', data: { id: 1 } });
    const [without] = events.event('crm', 'note.added', { id: 1 }, 1);
    expect(JSON.parse(without!.payload)).not.toHaveProperty('tenant');
  });
});
