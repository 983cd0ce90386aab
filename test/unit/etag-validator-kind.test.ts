import { describe, expect, it } from 'vitest';
import { VALIDATOR_STEPS } from '../../generator/analyse/step-sources.js';
import { settleValidatorKind } from '../../generator/analyse/validator.js';
import { analyseSources } from '../../generator/core.js';
import { Diagnostics } from '../../generator/diagnostics.js';

/**
 * A GET's Validator beside a versioned write (docs/internals/contract.md §15): it tags with the version when it selects
 * exactly the version column, and anything else is an error, so that the GET's tags are what If-Match compares. The
 * `version` attribute is read off the Request elements as written (its analysis is the versioned writes' own).
 */
function operationsOf(validator: string) {
  const { project, diagnostics } = analyseSources([
    { path: 'resources/app/backend.xml', text: '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic"/>' },
    {
      path: 'resources/app/orders.xml',
      text: `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="staff">
  <Request method="GET"><Validator>${validator}</Validator><Sql id="orders">select order_id, row_version from orders where order_id = $order_id</Sql></Request>
</Resource>`,
    },
  ]);
  expect(diagnostics.lines()).toEqual([]);
  return project.backends[0]!.resources[0]!.operations;
}

const version = { name: 'version', value: 'row_version', at: { file: 'resources/app/orders.xml', line: 3, col: 20 } };

describe('a Validator beside a versioned write', () => {
  it('is of kind version when it selects only the version column, and keeps its statement for the types and the proof', () => {
    const operations = operationsOf('select row_version from orders where order_id = $order_id');
    expect(operations[0]!.validator!.kind).toBe('rows');
    const diagnostics = new Diagnostics();
    settleValidatorKind(operations, [version], diagnostics);
    expect(diagnostics.lines()).toEqual([]);
    expect(operations[0]!.validator!.kind).toBe('version');
    expect(VALIDATOR_STEPS.get(operations[0]!.validator!)?.sql).toBe('select row_version from orders where order_id = ?');
  });

  it('is an error when it selects anything else', () => {
    for (const sql of [
      'select max(updated_on) as changed from orders where order_id = $order_id',
      'select row_version, order_id from orders where order_id = $order_id',
    ]) {
      const operations = operationsOf(sql);
      const diagnostics = new Diagnostics();
      settleValidatorKind(operations, [version], diagnostics);
      expect(diagnostics.lines()).toEqual([
        "resources/app/orders.xml:2:25: the Validator must select only the version column row_version, so that the GET's tags are what If-Match compares",
      ]);
    }
  });

  it('stays of kind rows without a versioned write', () => {
    const operations = operationsOf('select max(order_id) as last from orders');
    settleValidatorKind(operations, [], new Diagnostics());
    expect(operations[0]!.validator!.kind).toBe('rows');
  });
});
