// The checks of a list that need the database (its order's columns unique, never NULL, of a type a cursor holds):
// apart, since they run in the types stage, once the step is typed, not when the Request is read.
import type { Diagnostics } from '../diagnostics.js';
import type { ListTerm, Operation, SqlStep } from '../ir.js';
import type { SnapshotEntry } from '../types/snapshot.js';

/** Widest a cursor's JSON value may be: a time (milliseconds), a number, or per character of text (`\u0000` escapes). */
const WIDTH = { Date: 16, number: 24, perCharacter: 6 } as const;

/**
 * The checks of a list that need the database, from the step's snapshot entry (the database at generation,
 * or the committed snapshot): a page's key ends in a unique column, and no column of its order may be NULL
 * (refused, rather than ordered: a keyset cannot say where NULLs go, and a NULL in a unique column repeats);
 * each value a cursor carries is a number, a text or a time (a time kept to the millisecond at most, which is
 * what JavaScript's Date holds). Types the filters' parameters as optional, and bounds `after`.
 */
export function checkListFacts(step: SqlStep, operation: Operation, entry: SnapshotEntry | undefined, diagnostics: Diagnostics): void {
  const list = step.list!;
  for (const filter of list.filters)
    operation.paramTypes[filter.param] = { ...(operation.paramTypes[filter.param] ?? { kind: 'any', nullable: true }), optional: true };
  if (!list.page) return;
  const where = `step "${step.id}"`;
  if (entry?.keys === undefined) {
    diagnostics.error(list.page.at, `the page key of ${where} is not checked against the database yet: set DATABASE_URL and run npm run generate`);
    return;
  }
  const terms = [
    ...list.page.key.map((term) => ({ term, at: list.page!.at })),
    ...(list.sort?.allow.map((allowed) => ({ term: allowed.term, at: list.sort!.at })) ?? []),
  ];
  const widths = new Map<ListTerm, number>();
  for (const { term, at } of terms) {
    const facts = entry.keys[`${term.table}.${term.tableColumn}`];
    const typed = step.typed?.find((column) => column.name === term.column);
    if (!facts || !typed) {
      diagnostics.error(at, `${where}: the database has no column ${term.table}.${term.tableColumn} for ${term.sql}`);
      continue;
    }
    if (facts.nullable || typed.nullable) {
      diagnostics.error(
        at,
        `${term.sql} may be NULL (${term.table}.${term.tableColumn}${facts.nullable ? '' : ', through an outer join'}): a page orders by NOT NULL columns only, since a cursor cannot say where NULLs go; make the column NOT NULL, or order by another`,
      );
    }
    if (typed.tsType !== 'number' && typed.tsType !== 'string' && typed.tsType !== 'Date') {
      diagnostics.error(at, `${term.sql} is ${facts.sqlType}, which a page cannot order by: order by a number, text or time column`);
      continue;
    }
    if (typed.tsType === 'Date' && (facts.precision ?? 0) > 3) {
      diagnostics.error(
        at,
        `${term.sql} is ${facts.sqlType}, which keeps microseconds that JavaScript's Date, and so a cursor, cannot hold: order by a time of milliseconds at most (datetime(3)), or another column`,
      );
    }
    term.type = typed.tsType;
    widths.set(term, typed.tsType === 'string' ? WIDTH.perCharacter * (facts.maxLength ?? 255) + 3 : WIDTH[typed.tsType] + 1);
  }
  const last = list.page.key.at(-1);
  const lastFacts = last && entry.keys[`${last.table}.${last.tableColumn}`];
  if (last && lastFacts && !lastFacts.unique) {
    diagnostics.error(
      list.page.at,
      `the page key of ${where} must end in a unique column, and ${last.table}.${last.tableColumn} is not (no primary key or unique index on it alone): end the key with one, such as the table's primary key`,
    );
  }
  // `after` is bounded by the widest cursor this list can make: the sort's name and widest column, then the key.
  const sortWidth = Math.max(0, ...(list.sort?.allow.map((allowed) => (widths.get(allowed.term) ?? 0) + allowed.name.length + 4) ?? []));
  const payload = 4 + sortWidth + list.page.key.reduce((sum, term) => sum + (widths.get(term) ?? 0), 0);
  operation.paramTypes.after = { ...operation.paramTypes.after!, maxLength: Math.ceil((payload * 4) / 3) + 44 };
}
