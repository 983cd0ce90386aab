import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Type juggling (issue 27, hole 2), at the door, against the built server: a
 * parameter whose type the database cannot tell (here, an unqualified column
 * of a join) is text. Bound as a number, a JSON 0 met a text column as a
 * number, and MariaDB compares 'alice' = 0 as true: the seed's token resource
 * (§4.2, `user_name = $user and pass_word = $pass` on plain-text rows)
 * answered {"user":0,"pass":0} with a token.
 */
const ROOT = path.resolve('test/.tmp/untyped-params');
const PASSWORD = 'alice-plain-pw';
const TABLES = ['ut_person', 'ut_team', 'ut_role', 'ut_user'];

const RESOURCES = {
  'resources/plain/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer">
  <AuthQuery>
    select cast(u.user_id as char) as sub, r.role_name as aud
    from ut_role r inner join ut_user u on r.user_id = u.user_id
    where user_name = $user and pass_word = $pass
  </AuthQuery>
</Backend>
`,
  // The seed's token resource, exactly: the query compares the password itself, on plain-text rows.
  'resources/plain/token.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST" status="201">
    <Sql id="authQuery" output="false">
      select cast(ut_user.user_id as char) as sub, ut_role.role_name as aud
      from ut_role inner join ut_user on ut_role.user_id = ut_user.user_id
      where user_name = $user and pass_word = $pass
    </Sql>
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
    </Execute>
  </Request>
</Resource>
`,
  'resources/plain/people.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET">
    <Sql id="people">
      select p.name, t.title from ut_person p inner join ut_team t on p.team_id = t.team_id
      where name = $name
    </Sql>
  </Request>
</Resource>
`,
};

let connection: mysql.Connection;
let server: BuiltServer;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  for (const table of TABLES) await connection.query(`drop table if exists ${table}`);
  await connection.query(
    'create table ut_user (user_id int unsigned not null auto_increment primary key, user_name varchar(64) not null, pass_word varchar(64) not null)',
  );
  await connection.query('create table ut_role (user_id int unsigned not null, role_name varchar(64) not null)');
  await connection.query('create table ut_team (team_id int unsigned not null primary key, title varchar(64) not null)');
  await connection.query('create table ut_person (name varchar(64) not null, team_id int unsigned not null)');
  const [inserted] = await connection.query<mysql.ResultSetHeader>('insert into ut_user (user_name, pass_word) values (?, ?)', ['alice', PASSWORD]);
  await connection.query("insert into ut_role (user_id, role_name) values (?, 'reader')", [inserted.insertId]);
  await connection.query("insert into ut_team (team_id, title) values (1, 'blue')");
  await connection.query("insert into ut_person (name, team_id) values ('alice', 1)");
  // Generated as a user would, asking the database for types: these parameters meet columns it cannot place.
  await buildScratchProject(ROOT, { files: RESOURCES, databaseUrl: inject('databaseUrl') });
  server = await startBuiltServer({ root: ROOT, env: { LOGIN_MAX_FAILURES: '100000', LOGIN_MAX_FAILURES_PER_ADDRESS: '100000' } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  for (const table of TABLES) await connection?.query(`drop table if exists ${table}`);
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { 'content-type': 'application/json' } });

describe('an untyped parameter is text', () => {
  it('is untyped here: the database cannot tell these columns, so the modules check no type', () => {
    expect(readFileSync(path.join(ROOT, 'generated/plain/token.ts'), 'utf8')).toContain("user: { kind: 'any', nullable: true, from: 'body' }");
    expect(readFileSync(path.join(ROOT, 'generated/plain/people.ts'), 'utf8')).toContain("name: { kind: 'any', nullable: true }");
  });

  it("the seed's token resource refuses a JSON 0 or false for the user name and password (401), and still takes the right ones (201)", async () => {
    const token = (body: unknown) => send(`${server.url}/plain/v1.0/token`, { method: 'POST', ...json(body) });
    for (const body of [
      { user: 0, pass: 0 },
      { user: false, pass: false },
      { user: 'alice', pass: 0 },
      { user: 0, pass: PASSWORD },
      { user: 0.0, pass: -0 },
    ]) {
      const response = await token(body);
      expect([response.status, response.json()], JSON.stringify(body)).toEqual([401, { message: 'Invalid credentials', status: 401 }]);
    }
    expect((await token({ user: 'alice', pass: PASSWORD })).status).toBe(201);
    expect((await send(`${server.url}/plain/v1.0/token`, { method: 'POST', ...formBody({ user: 'alice', pass: PASSWORD }) })).status).toBe(201);
  });

  it("a public GET's where name = $name finds no row named alice for a JSON 0 or false, nor for ?name=0", async () => {
    const people = async (query: string, body?: unknown) => {
      const response = await send(`${server.url}/plain/v1.0/people${query}`, { method: 'GET', ...(body === undefined ? {} : json(body)) });
      expect(response.status, `${query} ${JSON.stringify(body)}`).toBe(200);
      return (response.json() as { people: unknown[] }).people;
    };
    expect(await people('', { name: 0 })).toEqual([]);
    expect(await people('', { name: false })).toEqual([]);
    expect(await people('?name=0')).toEqual([]);
    // What a JSON number is bound as: its text, as a form would send it.
    await connection.query("insert into ut_person (name, team_id) values ('0', 1), ('false', 1)");
    expect(await people('', { name: 0 })).toEqual([{ name: '0', title: 'blue' }]);
    expect(await people('', { name: false })).toEqual([{ name: 'false', title: 'blue' }]);
    expect(await people('?name=alice')).toEqual([{ name: 'alice', title: 'blue' }]);
  });

  it('the auth queries the server runs itself bind the user name and password as text (token shape A)', async () => {
    const shapeA = (body: unknown) => send(`${server.url}/plain/`, { method: 'POST', ...json(body) });
    for (const body of [
      { auth: 'bearer', userid: 0, password: 0 },
      { auth: 'bearer', userid: false, password: false },
    ]) {
      expect((await shapeA(body)).status, JSON.stringify(body)).toBe(401);
    }
    expect((await shapeA({ auth: 'bearer', userid: 'alice', password: PASSWORD })).status).toBe(200);
  });
});
