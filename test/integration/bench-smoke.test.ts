import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

/**
 * The benchmark's smoke run: every server of `npm run bench` (the
 * generated one, the hand-written baseline, the raw node:http ceiling, Koa
 * hello-world) answers every scenario correctly: 26 scenarios, 66 checks
 * (the public GET on six servers, the ceiling and Koa among them again with the contract's duties, each answer of
 * the generated server's headers as theirs, the Bearer GET on two and the hand-written
 * public GET beside it, the GET with the backend's own token and two providers' tokens, the GET with a token, an API key and a rate limit, a refresh, one user's Basic GET at 32 connections with a remembered hash and with the seed's AuthQuery, the public GET untraced, traced to a loopback OTLP collector and traced with a 10% ratio sampler, the first page and a deep one of each of two page orders, from the generated server and from the ceiling (bench/raw-http.ts, the deep page after the key's values sent as they are), two on each other scenario (the tenant GET, write and Basic GET among them, each tenant GET answering its organisation's rows only), and issue 44's: the one-row GET with an ETag and on the server with ETAGS=off, the 10 KB page's 200 and 304 by a digest, from the generated server and from the ceiling with the duties, and by a `<Validator>` (three in that scenario), and 50 POSTs and a batch of 50, whose rows must be in the table, and issue 45's: the one-row public and Bearer GETs over REST and as MCP tools/calls, and tools/list of a backend of 100 routes listing a member's 180 tools; the build of
 * another commit that the full run measures tracing against is not made), and two servers deliver 200 events to the bench's loopback receiver. It asserts no speed.
 */
describe('npm run bench -- --smoke', () => {
  it('has every server answer every scenario correctly', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
      timeout: 120_000,
    });
    expect(stdout).toBe('66 passed, 0 failed\n');
  }, 180_000);
});
