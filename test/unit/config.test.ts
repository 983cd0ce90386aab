import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';

/** runtime/config.ts: how the settings of the environment combine. */
const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'mysql://u:p@h/d', ...env });

describe('PROXY_HOPS and TRUST_PROXY', () => {
  it('trusts no proxy by default, one for TRUST_PROXY=true, and as many as PROXY_HOPS says', () => {
    expect(load({}).proxyHops).toBe(0);
    expect(load({ TRUST_PROXY: 'true' }).proxyHops).toBe(1);
    expect(load({ TRUST_PROXY: 'false' }).proxyHops).toBe(0);
    expect(load({ PROXY_HOPS: '2' }).proxyHops).toBe(2);
    expect(load({ PROXY_HOPS: '0' }).proxyHops).toBe(0);
    expect(load({ PROXY_HOPS: '2', TRUST_PROXY: 'true' }).proxyHops).toBe(2);
    expect(load({ PROXY_HOPS: '0', TRUST_PROXY: 'false' }).proxyHops).toBe(0);
  });

  it('names both when they disagree, and refuses a PROXY_HOPS that is not a whole number', () => {
    expect(() => load({ PROXY_HOPS: '0', TRUST_PROXY: 'true' })).toThrow(ConfigError);
    expect(() => load({ PROXY_HOPS: '1', TRUST_PROXY: 'false' })).toThrow(/TRUST_PROXY=false and PROXY_HOPS=1 disagree/);
    expect(() => load({ PROXY_HOPS: 'one' })).toThrow(/PROXY_HOPS is a whole number, not one/);
  });
});

describe('the login backoff', () => {
  it('waits at most 3 s by default, and LOGIN_BACKOFF_MAX_MS sets it (0 turns it off)', () => {
    expect(load({}).loginLimits.backoffMaxMs).toBe(3000);
    expect(load({ LOGIN_BACKOFF_MAX_MS: '0' }).loginLimits.backoffMaxMs).toBe(0);
  });
});

describe('the OTLP endpoint (traces)', () => {
  it('is off unset, takes an http(s) URL, the traces-only variable first, and refuses anything else by name', async () => {
    expect(load({}).otlpEndpoint).toBeUndefined();
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlpEndpoint).toBe('http://collector:4318');
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/v1/traces' }).otlpEndpoint).toBe(
      'https://b/v1/traces',
    );
    expect(() => load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT is an http:\/\/ or https:\/\/ URL/);
    expect(() => load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is an http/);
    // Off, startTracing loads nothing and answers undefined; OTEL_SDK_DISABLED turns a set endpoint off too.
    const { startTracing } = await import('../../runtime/tracing/index.js');
    expect(await startTracing({})).toBeUndefined();
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });
});

describe('JWT_SECRET', () => {
  it('is needed by a backend with paged routes, whose cursors are signed with it, and says so beside the Bearer backends', () => {
    const loadFor = (needs: { bearerBackends?: string[]; pagedBackends?: string[] }) => () => loadConfig({ DATABASE_URL: 'mysql://u:p@h/d' }, undefined, needs);
    expect(loadFor({})).not.toThrow();
    expect(loadFor({ pagedBackends: ['staff'] })).toThrow(/^JWT_SECRET is not set: backend staff signs the cursors of its pages with it\. Make one with/);
    expect(loadFor({ bearerBackends: ['shop'], pagedBackends: ['shop', 'staff'] })).toThrow(
      /^JWT_SECRET is not set: backend shop signs and checks Bearer tokens with it, and backend staff signs the cursors of its pages with it\./,
    );
  });
});
