import { paramTypeOf, type TableColumn } from '../../generator/types/columns.js';
import type { ParamSpec } from '../../runtime/contract.js';
import { HttpError } from '../../runtime/errors.js';
import { readParams } from '../../runtime/params.js';
import { code, page, table } from './markdown.js';

/**
 * docs/reference/parameters.md: each parameter type, as the generator gives it from the column a parameter meets
 * (generator/types/columns.ts's paramTypeOf), and the 400 the runtime answers for a bad value (runtime/params.ts's
 * readParams), both asked here, never written out by hand: a sample column of each type, and a value it refuses.
 */
interface Sample {
  /** The column type as MariaDB's information_schema says it. */
  dataType: string;
  columnType: string;
  maxLength?: number;
  /** Values of the wrong kind: each gives its own message. */
  bad: readonly (string | number | boolean)[];
}

const SAMPLES: readonly Sample[] = [
  { dataType: 'int', columnType: 'int(11)', bad: ['ten', 2 ** 53 + 2] },
  { dataType: 'int', columnType: 'int(10) unsigned', bad: ['-1'] },
  { dataType: 'bigint', columnType: 'bigint(20)', bad: ['ten'] },
  { dataType: 'decimal', columnType: 'decimal(10,2)', bad: ['1e3', 1e20] },
  { dataType: 'double', columnType: 'double', bad: ['ten'] },
  { dataType: 'varchar', columnType: 'varchar(20)', maxLength: 20, bad: ['x'.repeat(21)] },
  { dataType: 'enum', columnType: "enum('new','paid')", bad: ['old'] },
  { dataType: 'date', columnType: 'date', bad: ['27/11/2026'] },
  { dataType: 'datetime', columnType: 'datetime', bad: ['noon'] },
  { dataType: 'time', columnType: 'time', bad: ['noon'] },
  { dataType: 'json', columnType: 'json', bad: [] },
];

/** What each kind takes, in a line (the checks themselves are runtime/params.ts's). */
const TAKES: Record<ParamSpec['kind'], string> = {
  integer: 'a whole number (a JSON number or its text); unsigned columns refuse a minus',
  bigint: 'a whole number, passed on as text so that no digit is lost (send one past 2^53 as a string)',
  decimal: 'a decimal number, passed on as text',
  number: 'a number, exponent allowed',
  string: "any scalar as text, within the column's length in characters",
  enum: "one of the column's values, exactly",
  date: 'YYYY-MM-DD',
  datetime: 'YYYY-MM-DD, with HH:MM[:SS[.ffffff]] after a space or T, and Z',
  time: '[-]H:MM[:SS[.ffffff]], hours up to 3 digits',
  any: 'any scalar, bound as its text (a JSON 0 as "0"): a column of no checked type, or a parameter that meets no column',
};

/** The message readParams answers for `value` under `spec`; '' when it takes the value. */
function messageFor(spec: ParamSpec, value: unknown, body = true): string {
  try {
    readParams({}, body ? { p: value } : {}, { p: spec });
    return '';
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 400) throw error;
    return error.message;
  }
}

export function parametersPage(): string {
  const rows = SAMPLES.map((sample) => {
    const column: TableColumn = { name: 'c', dataType: sample.dataType, columnType: sample.columnType, nullable: false, maxLength: sample.maxLength ?? null };
    const spec = paramTypeOf('t', column);
    const messages = sample.bad.map((value) => messageFor(spec, value)).filter((message) => message !== '');
    return [code(spec.kind), code(sample.columnType), TAKES[spec.kind], messages.map(code).join('<br>') || '(none: any scalar is taken)'];
  });
  // A kind the runtime knows (ParamSpec's, which TAKES must name) with no sample would be missing from the page.
  const missing = Object.keys(TAKES).filter((kind) => !rows.some((row) => row[0] === code(kind)));
  if (missing.length > 0) throw new Error(`parameters.md: no sample column of the kinds ${missing.join(', ')}`);
  const any: ParamSpec = { kind: 'any', nullable: false };
  const notNull: ParamSpec = { kind: 'string', nullable: false };
  const limit: ParamSpec = { kind: 'integer', nullable: false, min: 1, max: 100, optional: true };
  const credential: ParamSpec = { kind: 'string', nullable: false, maxBytes: 1024, from: 'body' };
  const every = [
    ['a required parameter not sent', code(messageFor(any, undefined, false))],
    ['an object, an array or a repeated query key', code(messageFor(any, { a: 1 }))],
    ['null for a NOT NULL column', code(messageFor(notNull, null))],
    ['a string with a lone surrogate (\\uD800)', code(messageFor(any, '\uD800'))],
    ["a list's `limit` out of its range (Page size 1 to max)", code(messageFor(limit, 0))],
    ["a credential past its bound in bytes (a token request's password: 1,024)", code(messageFor(credential, 'x'.repeat(1025)))],
  ];
  return page('Parameters', 'generator/types/columns.ts and runtime/params.ts', [
    'A parameter (`$name` in a step) is typed by the column it meets, which the generator asks the database for. ' +
      'The server checks each value before any statement runs and answers a bad one with 400 and ' +
      '`{"message": ..., "status": 400}`; the messages below are the runtime\'s own, for a parameter named `p`. ' +
      'Values come from the query string, a form or a JSON body (the body wins).',
    '## Types',
    table(['type', 'sample column', 'takes', '400 message for a bad value'], rows),
    '## Every parameter',
    table(['when', '400 message'], every),
  ]);
}
