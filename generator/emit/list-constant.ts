// A list step's constant (runtime's ListSpec): its pieces, headed by the widest statement the runtime makes of them;
// apart from the module's other declarations, since it is long and only lists need it.
import { listSpec, widestStatement } from '../analyse/list.js';
import type { Operation, SqlStep } from '../ir.js';
import { listConstantName } from './module-names.js';
import { doc, propertyName, quote, templateLiteral } from './print.js';

/**
 * A list step's pieces (runtime's ListSpec), headed by the statement the runtime makes from them for the widest
 * request (every filter, after a cursor), so that a reader sees the SQL that runs.
 */
export function listConstant(operation: Operation, step: SqlStep): string {
  const spec = listSpec(step.list!);
  const term = (part: { sql: string; column: string; desc: boolean; type: string }) =>
    `{ sql: ${quote(part.sql)}, column: ${quote(part.column)}, desc: ${part.desc}, type: ${quote(part.type)} }`;
  const lines = [
    `sql: ${templateLiteral(spec.sql)},`,
    `where: ${spec.where},`,
    `tail: ${spec.tail === '' ? "''" : templateLiteral(spec.tail)},`,
    spec.filters.length === 0 ? 'filters: [],' : 'filters: [',
    ...spec.filters.map((filter) => `  { param: ${quote(filter.param)}, sql: ${templateLiteral(filter.sql)}, uses: ${filter.uses} },`),
    ...(spec.filters.length === 0 ? [] : ['],']),
    ...(spec.sort
      ? [
          'sort: {',
          `  param: ${quote(spec.sort.param)},`,
          '  allow: {',
          ...Object.entries(spec.sort.allow).map(([name, part]) => `    ${propertyName(name)}: ${term(part)},`),
          '  },',
          `  default: ${spec.sort.default ? `{ name: ${quote(spec.sort.default.name)}, desc: ${spec.sort.default.desc} }` : 'null'},`,
          '},',
        ]
      : ['sort: null,']),
    ...(spec.page
      ? ['page: {', `  size: ${spec.page.size},`, `  max: ${spec.page.max},`, '  key: [', ...spec.page.key.map((part) => `    ${term(part)},`), '  ],', '},']
      : ['page: null,']),
  ];
  const what = [step.list!.filters.length > 0 ? 'the filters sent' : '', step.list!.sort ? 'the sort asked for' : '', step.list!.page ? 'the page' : '']
    .filter(Boolean)
    .join(', ');
  const about = `${operation.method} step "${step.id}", a list${step.output ? '' : ' (not in the response)'}: the runtime makes each request's statement from these pieces (${what}), every value a \`?\`. The widest it makes:`;
  const head = [
    '/**',
    ...wrap(doc(about), 110).map((line) => ` * ${line}`),
    ' *',
    ...widestStatement(step.list!)
      .split('\n')
      .map((line) => ` *     ${doc(line)}`.trimEnd()),
    ' */',
  ];
  return [...head, `export const ${listConstantName(step)}: ListSpec = {`, ...lines.map((line) => `  ${line}`), '};'].join('\n');
}

/** Words in lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}
