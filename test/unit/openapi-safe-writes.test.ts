import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { openapiTypes } from 'xmlrest-typed-client';
import { emitResource } from '../../generator/emit/resource.js';
import type { Operation, Project } from '../../generator/ir.js';
import { openApiDocument } from '../../generator/openapi.js';

/**
 * The OpenAPI document of writes a client can retry and race safely (docs/internals/contract.md §15), made from the
 * lab's IR with the fields of issue 44 set by hand: a GET's If-None-Match and 304, a versioned write's If-Match,
 * 412, 428 and 404, a POST's Idempotency-Key, 409 and 422, and a backend's batch; valid, and typed for a client.
 */
function labProject(): Project {
  const project = JSON.parse(readFileSync('test/golden/lab/expected/ir.json', 'utf8')) as Project;
  const lab = project.backends[0]!;
  const resource = (name: string) => lab.resources.find((candidate) => candidate.name === name && candidate.version === '1.0')!;
  const at = { file: 'resources/lab/echo.xml', line: 1, col: 1 };
  const echo = resource('echo');
  const get = echo.operations.find((operation) => operation.method === 'GET')!;
  get.maxAge = 60;
  const post = echo.operations.find((operation) => operation.method === 'POST')!;
  // A versioned PUT that requires If-Match, and a DELETE where it is optional: copies of the echo's POST.
  const statements = {
    unconditional: 'update t set version = version + 1',
    conditional: 'update t set version = version + 1 where version = ?',
    probe: 'select version from t',
  };
  const put: Operation = {
    ...structuredClone(post),
    method: 'PUT',
    status: 200,
    version: { column: 'version', required: true, step: 'echo', at, statements, probeBinds: [] },
  };
  const del: Operation = {
    ...structuredClone(post),
    method: 'DELETE',
    status: 200,
    version: { column: 'version', required: false, step: 'echo', at, statements, probeBinds: [] },
  };
  echo.operations.push(put, del);
  const whoami = resource('whoami').operations[0]!;
  whoami.validator = { sql: 'select 1', binds: [], kind: 'rows', at };
  const exported = resource('export').operations.find((operation) => operation.method === 'POST')!;
  exported.transaction = true;
  exported.idempotency = 'required';
  lab.batch = { maxOperations: 7, timeoutMs: 10_000 };
  return project;
}

const document = openApiDocument(labProject()) as Record<string, any>;
const paths = document.paths as Record<string, Record<string, any>>;
const refs = (parameters: { $ref?: string }[] | undefined) => (parameters ?? []).map((parameter) => parameter.$ref ?? (parameter as { name: string }).name);

describe('the OpenAPI document of safe writes', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : compileErrors(result)).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('gives every GET If-None-Match, ETag and Cache-Control on its 200, and a 304 without a body', () => {
    for (const [path, item] of Object.entries(paths)) {
      if (!item.get) continue;
      expect(refs(item.get.parameters), path).toContain('#/components/parameters/IfNoneMatch');
      const success = item.get.responses['200'];
      expect(Object.keys(success.headers), path).toEqual(expect.arrayContaining(['ETag', 'Cache-Control']));
      expect(item.get.responses['304'], path).toEqual({ $ref: '#/components/responses/NotModified' });
    }
    const notModified = document.components.responses.NotModified;
    expect(Object.keys(notModified.headers)).toEqual(['ETag', 'Cache-Control', 'Vary']);
    expect(notModified.content).toBeUndefined();
    expect(document.components.parameters.IfNoneMatch).toMatchObject({ name: 'If-None-Match', in: 'header', required: false });
    expect(paths['/lab/v1.0/echo']!.get.description).toMatch(/max-age=60/);
    expect(paths['/lab/v1.0/whoami']!.get.description).toMatch(/validator/);
  });

  it('gives a versioned write If-Match (required when the route says so), ETag on its answer, 412, 404, and 428 only when required', () => {
    const { put, delete: del, post } = paths['/lab/v1.0/echo']!;
    expect(refs(put.parameters)).toContain('#/components/parameters/IfMatchRequired');
    expect(refs(del.parameters)).toContain('#/components/parameters/IfMatch');
    expect(document.components.parameters.IfMatchRequired).toMatchObject({ name: 'If-Match', in: 'header', required: true });
    expect(document.components.parameters.IfMatch).toMatchObject({ name: 'If-Match', in: 'header', required: false });
    for (const write of [put, del]) {
      expect(write.responses['200'].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
      expect(write.responses['412']).toEqual({ $ref: '#/components/responses/PreconditionFailed' });
      expect(write.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    }
    expect(put.responses['428']).toEqual({ $ref: '#/components/responses/PreconditionRequired' });
    expect(del.responses['428']).toBeUndefined();
    expect(document.components.responses.PreconditionFailed.headers).toEqual({ ETag: { $ref: '#/components/headers/ETag' } });
    // A write without a version takes no If-Match.
    expect(refs(post.parameters).filter((name) => /IfMatch/.test(name))).toEqual([]);
  });

  it('gives a POST that runs a transaction Idempotency-Key (required when the route says so), 409, 422 and Idempotent-Replayed', () => {
    const post = paths['/lab/v1.0/export']!.post;
    expect(refs(post.parameters)).toEqual(['#/components/parameters/IdempotencyKeyRequired']);
    expect(document.components.parameters.IdempotencyKeyRequired).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: true });
    expect(post.responses['409']).toEqual({ $ref: '#/components/responses/IdempotencyConflict' });
    expect(post.responses['422']).toEqual({ $ref: '#/components/responses/IdempotencyKeyReused' });
    expect(post.responses['400']).toBeDefined();
    const success = Object.keys(post.responses).find((status) => /^2/.test(status))!;
    expect(post.responses[success].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/IdempotentReplayed' });
    expect(document.components.responses.IdempotencyConflict.headers['Retry-After']).toBeDefined();
    // The echo's POST runs no transaction: no record is written, so it takes no key.
    expect(refs(paths['/lab/v1.0/echo']!.post.parameters).filter((name) => /Idempotency/.test(name))).toEqual([]);
  });

  it("describes a backend's batch: its body with maxItems, BatchAnswer, and BatchFailure under 4XX and 503", () => {
    const batch = paths['/lab/batch']!.post;
    expect(batch.requestBody.content['application/json'].schema).toEqual({
      type: 'object',
      required: ['operations'],
      properties: { operations: { type: 'array', maxItems: 7, items: { $ref: '#/components/schemas/BatchOperation' } } },
    });
    expect(batch.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/BatchAnswer' });
    for (const status of ['4XX', '503']) {
      expect(batch.responses[status].content['application/json'].schema.anyOf).toContainEqual({ $ref: '#/components/schemas/BatchFailure' });
    }
    expect(batch.responses['503'].headers['Retry-After']).toBeDefined();
    expect(refs(batch.parameters)).toEqual(['#/components/parameters/IdempotencyKey']);
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['BatchOperation', 'BatchAnswer', 'BatchFailure']));
    expect(document.components.schemas.BatchFailure.required).toEqual(['message', 'status', 'index', 'error']);
  });

  it('puts under components only the parts some operation uses', () => {
    const plain = openApiDocument(JSON.parse(readFileSync('test/golden/lab/expected/ir.json', 'utf8')) as Project) as Record<string, any>;
    expect(Object.keys(plain.components.parameters)).toEqual(['IfNoneMatch']);
    expect(Object.keys(plain.components.headers)).toEqual(['ETag', 'CacheControl', 'Vary']);
    expect(plain.components.responses.PreconditionFailed).toBeUndefined();
    expect(plain.components.schemas.BatchOperation).toBeUndefined();
    expect(plain.paths['/lab/batch']).toBeUndefined();
  });

  it('types them for a client: the headers as parameters, 304, 412, 428, and the batch body', async () => {
    const types = await openapiTypes(document);
    const operation = (name: string) => types.slice(types.indexOf(`  ${name}: {`), types.indexOf('\n  };', types.indexOf(`  ${name}: {`)));
    const put = operation('lab_echo_v1_0_put');
    expect(put).toMatch(/ {8}'If-Match': components\['parameters'\]\['IfMatchRequired'\];/);
    expect(put).toMatch(/412: components\['responses'\]\['PreconditionFailed'\]/);
    expect(put).toMatch(/428: components\['responses'\]\['PreconditionRequired'\]/);
    const get = operation('lab_echo_v1_0_get');
    expect(get).toMatch(/'If-None-Match'\?: components\['parameters'\]\['IfNoneMatch'\]/);
    expect(get).toMatch(/304: components\['responses'\]\['NotModified'\]/);
    const post = operation('lab_export_v1_0_post');
    expect(post).toMatch(/'Idempotency-Key': components\['parameters'\]\['IdempotencyKeyRequired'\]/);
    const batch = operation('lab_batch');
    expect(batch).toMatch(/operations: components\['schemas'\]\['BatchOperation'\]\[\]/);
    expect(batch).toMatch(/'4XX': \{/);
  }, 60_000);

  it('makes openapi-fetch insist on a required If-Match and Idempotency-Key, and type a batch', async () => {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(path.join(DIR, 'openapi.d.ts'), await openapiTypes(document));
    const client = (calls: string) =>
      [
        "import createClient from 'openapi-fetch';",
        "import type { paths } from './openapi.js';",
        "const lab = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });",
        'export async function calls() {',
        calls,
        '}',
        '',
      ].join('\n');
    const right = client(
      [
        "  await lab.PUT('/lab/v1.0/echo', { params: { header: { 'If-Match': '\"7\"' } }, body: { a: 'x' } });",
        "  await lab.POST('/lab/v1.0/export', { params: { header: { 'Idempotency-Key': 'k-1' } } });",
        "  const { data } = await lab.POST('/lab/batch', { body: { operations: [{ method: 'GET', path: '/lab/v1.0/echo', headers: { 'If-None-Match': '*' } }] } });",
        '  return data?.results[0]?.status;',
      ].join('\n'),
    );
    expect(await compile('right', right)).toEqual({ code: 0, output: '' });
    // Without If-Match, a batch operation with a header it does not take, a POST without its required key: each refused, at its line.
    const wrong = client(
      [
        "  await lab.PUT('/lab/v1.0/echo', { body: { a: 'x' } });",
        "  await lab.POST('/lab/batch', { body: { operations: [{ method: 'GET', path: '/lab/v1.0/echo', headers: { Cookie: 'x' } }] } });",
        "  await lab.POST('/lab/v1.0/export', {});",
      ].join('\n'),
    );
    const { code, output } = await compile('wrong', wrong);
    expect(code).not.toBe(0);
    const errors = output.split('\n').filter((line) => /\.ts\(\d+,\d+\): error/.test(line));
    expect(errors.map((line) => /wrong\.ts\((\d+),/.exec(line)?.[1])).toEqual(['5', '6', '7']);
  }, 120_000);
});

describe('the module of a GET with a validator', () => {
  it('says validator: true, which the console shows, and nothing on a GET without one', () => {
    const lab = labProject().backends[0]!;
    const options = { outDir: 'generated', resourcesDir: 'resources', projectRoot: process.cwd(), generatorVersion: '0.0.0' };
    const module = (name: string) => emitResource(lab.resources.find((resource) => resource.name === name)!, `generated/lab/${name}.ts`, options);
    expect(module('whoami')).toMatch(/GET: \{[^\n]*validator: true, handler/);
    expect(module('echo')).not.toContain('validator: true');
  });
});

const DIR = 'test/.tmp/openapi-safe-writes';
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

async function compile(name: string, text: string): Promise<{ code: number; output: string }> {
  writeFileSync(path.join(DIR, `${name}.ts`), text);
  writeFileSync(path.join(DIR, `${name}.tsconfig.json`), JSON.stringify({ extends: '../../../tsconfig.json', files: [`${name}.ts`] }));
  try {
    const { stdout } = await promisify(execFile)(path.resolve('node_modules/.bin/tsc'), ['--noEmit', '-p', path.join(DIR, `${name}.tsconfig.json`)]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}
