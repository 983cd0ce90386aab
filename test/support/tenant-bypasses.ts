/**
 * Statements the tenant proof once proved that, run on MariaDB, cross tenants: the adversarial review of issue 43's
 * proof. test/unit/tenant-proof.test.ts checks that each is refused (at the place `^` marks, with the words given);
 * test/integration/tenant-bypass-real.test.ts runs each on MariaDB, `$tenant` bound to tenant 1, and sees tenant
 * 2's rows or their count (`id` 2, or `n` 2) come back. The tables: orders (id, org_id, total), items (id, org_id,
 * oid), notes (id, org_id, body), each with one row of tenant 1 (id 1) and one of tenant 2 (id 2).
 */
export const REVIEW_BYPASSES: [string, string][] = [
  // The tokenizer's number swallows the letters after it: MariaDB reads `1.5 or 1`.
  ['select o.id from orders o where o.org_id = $tenant and o.total = ^1.5or 1', 'a number run into a word'],
  ['select o.id from orders o where o.org_id = $tenant and o.total = ^1e1or 1', 'a number run into a word'],
  ['select o.id from orders o where o.org_id = $tenant and o.total = ^.5xor 1', 'a number run into a word'],
  // `--` then U+00A0: a comment to the tokenizer, two minus signs and a name (z's column) to MariaDB.
  ['select o.id from orders o, (select 1 as `\u00a0`) z where o.org_id = $tenant ^--\u00a0 or 1', 'a -- comment not followed by'],
  // `--` then DEL: a comment to MariaDB (a control character follows), minus signs to the tokenizer.
  ['select o.id from orders o where o.total >= 0 --^\u007f and o.org_id = $tenant\n and 1', 'a character the reader does not know'],
  // A word after a dot is a name: `d.end` closed no case, and hid the `or` after it.
  ['select o.id from ^orders o, (select 0 as `end`) d where o.org_id = $tenant and d.end or 1', 'the where holds an or'],
  ['select o.id from ^orders o, (select 0 as `end`) d where o.org_id = $tenant and end or 1', 'an end without its case'],
  ['select o.id from ^orders o, (select 0 as `case`) d where o.org_id = $tenant and d.case = 0 or 1', "is not kept to the caller's tenant"],
  // MariaDB's aliases are case-sensitive on Linux: `o` in the subquery is the outer orders, not items O.
  ['select o.id, (select count(*) from ^items O where o.org_id = $tenant) n from orders o where o.org_id = $tenant', "another block's alias (o)"],
  // ODBC braces `{x expr}` nest the filter in a comparison the reader did not see.
  ['select o.id from orders o where 1 and ^{x 1 and o.org_id = $tenant and 1} = 0', 'a character the reader does not know ("{")'],
];

/** Writes the proof once proved that put a row in tenant 2 (an `orders` row of org_id 2 and id 5 or more). */
export const REVIEW_WRITE_BYPASSES: [string, string][] = [
  // A parenthesised union's arms after the first were not read as the insert's rows.
  ['insert into orders (id, org_id, total) (select 5, $tenant, 0 union select 6, ^2, 0)', 'selects something other than $tenant'],
  ['insert into orders (id, org_id, total) select 5, $tenant, 0 union (select 6, $tenant, 0 union select 7, ^2, 0)', 'selects something other than $tenant'],
];

/** Proven once, crossing tenants where the server's sql_mode has NO_BACKSLASH_ESCAPES (`'a\'` ends there). */
export const NO_BACKSLASH_ESCAPES_BYPASS: [string, string] = [
  "select o.id from orders o where o.org_id = $tenant and o.total = ^'a\\' or 1 -- '",
  'a backslash in a string',
];
