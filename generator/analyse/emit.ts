import { EVENT_TYPE, receives } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Backend, Bind, Emit, Operation, Step } from '../ir.js';
import { pascal } from '../names.js';
import { AttributeReader, type RawAttribute, type RawElement } from './elements.js';

/**
 * `<Emit event step key>` in a Request (docs/internals/contract.md §12): the result of
 * an earlier Sql step of the request becomes an event, in its transaction.
 * Checked here: the event type's form; a step that exists, comes before the
 * Emit and is a Sql step (a read's rows or a write's result; a plug-in's
 * result may hold anything, a token among them); a key that is one value; a
 * Webhook of the backend that receives it; and (at the end of the request) a
 * request that writes, whose transaction the event joins. An event reports a
 * change: by default (`when="changed"`) it is sent only when every write step
 * before it found a row, so that a caller cannot make the backend sign an
 * event about a row its write did not touch (an update `where ... and
 * user_id = $uid` of someone else's row changes nothing, and sends nothing).
 */
export interface EmitContext {
  backend: Backend;
  /** The request's steps so far, in order. */
  steps: readonly Step[];
  /** Every step id of the file, to tell a later step from an unknown one. */
  allStepIds: ReadonlySet<string>;
  /** An Arg-like value (`$name`, `$uid`, `$[step][row].column`) as a bind, reported when it is none. */
  bind(value: RawAttribute, where: string): Bind | undefined;
}

export function analyseEmit(element: RawElement, context: EmitContext, diagnostics: Diagnostics): Emit | undefined {
  const attrs = new AttributeReader(element, diagnostics);
  const event = attrs.required('event');
  const stepAttr = attrs.required('step');
  const keyAttr = attrs.optional('key');
  const whenAttr = attrs.optional('when');
  attrs.rejectOthers();
  if (element.children.length > 0 || element.text.trim() !== '') diagnostics.error(element.at, 'Emit holds nothing: its attributes say it all');
  let ok = event !== undefined && stepAttr !== undefined;
  if (event && !EVENT_TYPE.test(event.value)) {
    diagnostics.error(event.at, `event is a type such as order.placed (letters, digits and _, separated by full stops), not "${event.value}"`);
    ok = false;
  } else if (event && !(context.backend.webhooks ?? []).some((webhook) => receives(webhook, event.value))) {
    diagnostics.error(
      event.at,
      `event "${event.value}" goes to no Webhook of backend "${context.backend.name}": add <Webhook event="${event.value}" url="https://..." secret="ENV_VAR"/> to ${context.backend.source ?? `resources/${context.backend.name}/backend.xml`}`,
    );
    ok = false;
  }
  if (stepAttr) {
    const step = context.steps.find((candidate) => candidate.id === stepAttr.value);
    if (!step) {
      const later = context.allStepIds.has(stepAttr.value);
      diagnostics.error(
        stepAttr.at,
        later
          ? `Emit names step "${stepAttr.value}", which does not come before it in this Request: put the Emit after its step`
          : `Emit names an unknown step: ${stepAttr.value}`,
      );
      ok = false;
    } else if (step.kind === 'execute') {
      diagnostics.error(stepAttr.at, `Emit sends a Sql step's rows or write result, not what the plug-in of step "${step.id}" returns`);
      ok = false;
    }
  }
  let key: Bind | null = null;
  if (keyAttr) {
    const bind = context.bind(keyAttr, `Emit "${event?.value ?? ''}"`);
    if (bind === undefined) ok = false;
    else if (bind.kind === 'literal') {
      diagnostics.error(keyAttr.at, `key is one value of the event's row ($name, $uid or $[step][row].column), not the text "${keyAttr.value}"`);
      ok = false;
    } else key = bind;
  }
  if (whenAttr && whenAttr.value !== 'changed' && whenAttr.value !== 'always') {
    diagnostics.error(whenAttr.at, `when is changed (sent only when the writes before it found a row) or always, not "${whenAttr.value}"`);
    ok = false;
  }
  if (!ok) return undefined;
  const changes =
    whenAttr?.value === 'always' ? null : context.steps.filter((step) => step.kind === 'sql' && step.statement === 'write').map((step) => step.id);
  return { event: event!.value, step: stepAttr!.value, key, changes, after: context.steps.length, at: element.at };
}

/** An event joins its request's transaction: a request with Emit must write, and (by default) before the Emit. */
export function checkEmitsWrite(emits: readonly Emit[], steps: readonly Step[], diagnostics: Diagnostics): void {
  if (emits.length === 0) return;
  const writes = steps.some((step) => step.kind === 'sql' && step.statement === 'write');
  for (const emit of emits) {
    if (!writes)
      diagnostics.error(
        emit.at,
        'Emit records a change: it belongs in a Request that writes (an insert, update or delete), whose transaction it joins and commits with',
      );
    else if (emit.changes?.length === 0)
      diagnostics.error(
        emit.at,
        'Emit is sent when the writes before it found a row, and no write comes before this one: put it after the write it reports, or say when="always"',
      );
  }
}

/**
 * One event type, one payload (Standard Webhooks, "Event types"): every Emit of a type in a backend sends
 * the same step's result, with the same columns where the SQL text names them.
 */
export function checkEventShapes(backend: Backend, diagnostics: Diagnostics): void {
  const first = new Map<string, { shape: string; at: SourceLocation; said: string }>();
  for (const resource of backend.resources) {
    for (const operation of resource.operations) {
      for (const emit of operation.emits ?? []) {
        const { shape, said } = shapeOf(operation, emit);
        const earlier = first.get(emit.event);
        if (earlier === undefined) first.set(emit.event, { shape, at: emit.at, said });
        else if (earlier.shape !== shape)
          diagnostics.error(
            emit.at,
            `event "${emit.event}" has another payload at ${earlier.at.file}:${earlier.at.line}:${earlier.at.col} (${earlier.said}) than here (${said}): one event type, one payload`,
          );
      }
    }
  }
}

function shapeOf(operation: Operation, emit: Emit): { shape: string; said: string } {
  const step = operation.steps.find((candidate) => candidate.id === emit.step)!;
  if (step.kind !== 'sql') return { shape: '', said: '' };
  const columns = step.statement === 'write' ? ['affectedRows', 'insertId'] : step.columns;
  return {
    shape: JSON.stringify([step.id, step.statement, columns, emit.key !== null]),
    said: `step "${step.id}"${step.statement === 'write' ? ', a write' : ''}${columns === null ? '' : `: ${columns.join(', ')}`}${emit.key === null ? ', no key' : ', a key'}`,
  };
}

/** Two event types of one resource that make one TypeScript name (`order.placed`, `order_placed`) would not compile. */
export function checkEventNames(operations: readonly Operation[], diagnostics: Diagnostics): void {
  const names = new Map<string, string>();
  for (const emit of operations.flatMap((operation) => operation.emits ?? [])) {
    const other = names.get(pascal(emit.event));
    if (other !== undefined && other !== emit.event)
      diagnostics.error(emit.at, `event types "${other}" and "${emit.event}" differ only in punctuation or case: rename one`);
    names.set(pascal(emit.event), emit.event);
  }
}
