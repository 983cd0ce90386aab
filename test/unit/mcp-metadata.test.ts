import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendModule, IssuerSettings } from '../../runtime/contract.js';
import { resourceMetadata } from '../../runtime/mcp/metadata.js';
import { send } from '../support/http.js';

/**
 * RFC 9728's protected resource metadata of a Bearer backend's MCP endpoint with outside issuers (docs/internals/contract.md
 * §16), served over HTTP by Koa as routes.ts mounts it, and the 401's challenge that points at it.
 */
const issuer = (iss: string) => ({ iss }) as IssuerSettings;
const backend = (fields: Partial<BackendModule>) => ({ name: 'app', authScheme: 'Bearer', issuers: [], ...fields }) as BackendModule;
const withIssuers = backend({
  issuers: [issuer('https://idp.example/realms/a'), issuer('https://idp.example/realms/b'), issuer('https://idp.example/realms/a')],
});
const metadata = resourceMetadata(withIssuers, '/api/app/mcp')!;
let server: ReturnType<Koa['listen']>;
let url = '';

beforeAll(async () => {
  const app = new Koa();
  app.use((ctx, next) =>
    ctx.path === metadata.path ? metadata.serve(ctx, next) : ((ctx.body = metadata.challenge(ctx as unknown as Koa.Context)), undefined),
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('resourceMetadata', () => {
  it('is served at the RFC 9728 place, naming the endpoint and each issuer once', async () => {
    expect(metadata.path).toBe('/.well-known/oauth-protected-resource/api/app/mcp');
    const response = await send(`${url}${metadata.path}`);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({
      resource: `${url}/api/app/mcp`,
      authorization_servers: ['https://idp.example/realms/a', 'https://idp.example/realms/b'],
      bearer_methods_supported: ['header'],
      resource_name: 'app (xmlrest MCP)',
    });
  });

  it("gives the 401's challenge naming it by its URL", async () => {
    expect((await send(`${url}/api/app/mcp`)).text).toBe(`Bearer resource_metadata="${url}${metadata.path}"`);
  });

  it('is none for a backend without outside issuers, or not on Bearer', () => {
    expect(resourceMetadata(backend({}), '/app/mcp')).toBeUndefined();
    expect(resourceMetadata(backend({ authScheme: 'Basic', issuers: [issuer('https://idp.example')] }), '/app/mcp')).toBeUndefined();
  });
});
