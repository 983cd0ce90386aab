import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDescriber } from '../../generator/index.js';
import { columnOf } from '../../generator/types/columns.js';
import { type Database, openDatabase } from '../../runtime/db/index.js';
import { answerJson } from '../../runtime/json-text.js';
import { connectTo } from '../../scripts/connection.js';
import { compiled, operationOf, outcome, step } from '../support/answer-json.js';

/**
 * The answers' JSON text the generator writes (docs/internals/contract.md §17) on the real driver's values: a table
 * of every column type MariaDB has, read through the runtime's own pool (its mysql2 settings: Date objects in UTC,
 * BIGINT and DECIMAL as strings, prepared statements), typed as `generate` types it, and each row's text compared
 * with JSON.stringify's, byte for byte: zero dates, the extremes of each integer, DECIMAL(65,30), -0 and 1e308,
 * TIME below zero, BIT, BLOB, JSON, GEOMETRY, and text with every escape.
 */
const TABLE = 'answer_json_probe';
const COLUMNS = `
  id int not null primary key,
  t1 tinyint(1) null, ti tinyint null, tu tinyint unsigned null, si smallint null, mi mediumint null, i int null,
  iu int unsigned null, bi bigint null, bu bigint unsigned null,
  d decimal(65,30) null, dm decimal(12,2) null, f float null, db double null,
  dt date null, dtt datetime(6) null, ts timestamp(3) null default null, tm time(6) null, y year null,
  c char(10) null, vc varchar(200) null, tx text null, lt longtext null,
  e enum('a','b\\'c','') null, st set('x','y','z') null,
  bn binary(4) null, vb varbinary(20) null, bl blob null, bt bit(10) null,
  js json null, g geometry null`;
const ROWS = [
  // Every column NULL.
  `(1, ${Array(30).fill('null').join(', ')})`,
  // The extremes, and text with escapes (a control, quote, backslash, U+2028, an emoji, a tab).
  `(2, 1, -128, 255, -32768, -8388608, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
    '-12345678901234567890123456789012345.123456789012345678901234567890', '0.10', -0.0, 1e308,
    '0000-00-00', '1000-01-01 00:00:00.000001', '2038-01-19 03:14:07.999', '-838:59:59.000000', 2155,
    'a"b\\\\c', concat('line', convert(x'e280a8' using utf8mb4), 'sep', char(1), '\\t', '😀'), repeat('long "text" ', 10),
    concat(repeat('x', 50), char(0 using utf8mb4)),
    'b''c', 'x,z', x'00ff1020', x'', x'deadbeef', b'1010101010', '{"a":[1,2.5,"\\\\u2028",null,true],"b":{"c":"d"}}', point(1.5, -2))`,
  // Ordinary values.
  `(3, 0, 7, 8, 9, 10, 11, 12, 13, 14, '3.000000000000000000000000000001', '19.90', 1.25, -3.5e-300,
    '2026-11-28', '2026-11-28 10:20:30.000000', '2026-11-28 10:20:30.123', '12:00:00', 1901,
    'plain', 'Kettle 1.7 l', '', 'é', '', '', x'01', x'02', x'03', b'0', '[]', null)`,
];

let database: Database;

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'));
  // A zero date, as an older schema may hold (strict modes refuse to store one today).
  await connection.query(`set session sql_mode = ''`);
  await connection.query(`drop table if exists ${TABLE}`);
  await connection.query(`create table ${TABLE} (${COLUMNS})`);
  await connection.query(`insert into ${TABLE} values ${ROWS.join(', ')}`);
  await connection.end();
  database = openDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await database?.end();
});

describe('the answers JSON text on the driver values', () => {
  it('writes every type MariaDB has, as read through the runtime pool, byte for byte as JSON.stringify', async () => {
    const sql = `select * from ${TABLE} where id > ? order by id`;
    const describer = await openDescriber(inject('databaseUrl'));
    const typed = (await describer.describe(sql)).map(columnOf);
    await describer.close();
    // Each type the mapper knows is here.
    expect(new Set(typed.map((column) => column.tsType))).toEqual(new Set(['number', 'string', 'Date', 'Buffer', 'unknown']));
    const json = compiled(operationOf([step('rows', typed)]))!;
    const rows = await database.select<Record<string, unknown>>(sql, [0]);
    expect(rows).toHaveLength(3);
    // The driver's values are what the traps are about.
    expect(rows[1]!.dt).toBeInstanceOf(Date);
    expect(Number.isNaN((rows[1]!.dt as Date).getTime())).toBe(true);
    expect(rows[1]!.bu).toBe('18446744073709551615');
    expect(rows[1]!.vc).toContain('\u2028');
    // MariaDB's JSON is a LONGTEXT to the statement's description, and the driver parses it: not the type described.
    expect(typed.find((column) => column.name === 'js')?.tsType).toBe('string');
    expect(rows[1]!.js).toEqual({ a: [1, 2.5, '\u2028', null, true], b: { c: 'd' } });
    for (const row of rows) {
      const answer = { rows: [row] };
      expect(json(answer)).toBe(JSON.stringify(answer));
    }
    const answer = { rows };
    expect(outcome(() => answerJson(json, answer))).toBe(JSON.stringify(answer));
  });
});
