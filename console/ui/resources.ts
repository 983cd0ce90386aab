import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { BatchNote, SafeWritesOf } from './safe-writes.js';
import { errorText, inputValue, Message, type Notice, names, type Resource, type Role } from './shared.js';

interface ImpactSide {
  count: number;
  users: string[];
  anonymous: boolean;
}

const describeAccess = (access: 'public' | '*' | string[]) => (access === 'public' ? 'public' : access === '*' ? 'any signed-in user' : access.join(' or '));

/**
 * A rule being edited (docs/internals/contract.md §8): the resource's own `auth`, or one method's, which replaces the
 * resource's for that method. `auth` as the file holds it: role names separated by spaces, `*`, `""` (a public
 * method); null for none (a public resource; a method that inherits the resource's).
 */
interface Change {
  resource: Resource;
  method: string | null;
  auth: string | null;
}

const keyOf = (resource: Resource) => `${resource.name}@${resource.version}`;
const targetOf = (change: Pick<Change, 'resource' | 'method'>) =>
  `${change.resource.name} v${change.resource.version}${change.method ? ` ${change.method}` : ''}`;
/** What a rule means, in words. */
const ruleText = (auth: string | null, method: string | null) =>
  auth === null ? (method ? 'the resource’s rule' : 'public') : auth === '' ? 'public' : auth === '*' ? 'any signed-in user (*)' : auth.split(' ').join(' or ');
/** The roles of a rule that is a list of roles; none for `*`, public or inherit. */
const listOf = (auth: string | null | undefined) => (auth === null || auth === undefined || auth === '' || auth === '*' ? [] : auth.split(' '));

/**
 * Resources and who may call them, method by method. The resource's rule and each method's own are edited as
 * lists (add a role, remove one: a caller holding any one of them may call), or set to any signed-in user,
 * public, or (a method) back to the resource's rule. Every change shows first who would gain and who would
 * lose access, and is saved only when the operator confirms.
 */
export function Resources({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [resources, setResources] = useState<Resource[]>([]);
  const [batch, setBatch] = useState<{ maxOperations: number } | null>(null);
  const [filter, setFilter] = useState('');
  /** Per resource: the rule being edited ('' the resource's, or a method) and the role picked to add. */
  const [editing, setEditing] = useState<Record<string, string>>({});
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [pending, setPending] = useState<(Change & { gain: ImpactSide; lose: ImpactSide }) | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const load = () =>
    api<{ resources: Resource[]; batch: { maxOperations: number } | null }>('GET', 'resources').then(
      (data) => {
        setResources(data.resources);
        setBatch(data.batch);
      },
      (error) => setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => void load(), []);
  const path = (resource: Resource) => `resources/${encodeURIComponent(resource.name)}/${encodeURIComponent(resource.version)}`;

  /** Before anything is saved: who gains and who loses. Where the users live elsewhere, it saves at once. */
  const propose = async (change: Change) => {
    setNotice(null);
    setPicked({});
    if (!manageable) return save(change);
    const query = [change.method ? `method=${change.method}` : '', change.auth === null ? '' : `auth=${encodeURIComponent(change.auth)}`]
      .filter(Boolean)
      .join('&');
    try {
      const impact = await api<{ gain: ImpactSide; lose: ImpactSide }>('GET', `${path(change.resource)}/impact${query ? `?${query}` : ''}`);
      setPending({ ...change, ...impact });
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const save = async (change: Change) => {
    setPending(null);
    try {
      const result = await api<{ enforcedAfterMs: number }>('PUT', `${path(change.resource)}/auth`, {
        ...(change.method ? { method: change.method } : {}),
        auth: change.auth,
        etag: change.resource.etag,
      });
      setNotice({
        kind: 'ok',
        text: `Set ${targetOf(change)} to ${ruleText(change.auth, change.method)}: the server enforces it now (${result.enforcedAfterMs} ms).`,
      });
      onChanged();
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
    await load();
  };
  const side = (what: string, impact: ImpactSide) =>
    impact.count === 0 && !impact.anonymous
      ? `nobody ${what}`
      : `${impact.count} user${impact.count === 1 ? '' : 's'}${impact.count > 0 ? ` (${names(impact.users, impact.count)})` : ''}${impact.anonymous ? ' and callers without credentials' : ''} ${what}`;

  /** The controls of one rule: its roles as chips to remove, a role to add, and the rules that are no list. */
  const editor = (resource: Resource, method: string | null, target: unknown) => {
    const key = keyOf(resource);
    const label = method ? `${key} ${method}` : key;
    const own = method ? resource.requestAuth[method] : (resource.auth ?? undefined);
    const list = listOf(own);
    // A method without a rule of its own starts from the resource's list when it adds a role.
    const base = method && own === undefined ? listOf(resource.auth) : list;
    const choice = picked[label] ?? '';
    const change = (auth: string | null) => propose({ resource, method, auth });
    return html`<div class="row" data-testid=${`editor-${label}`}>
      ${target}
      ${list.map(
        (role) =>
          html`<span class="chip" data-testid="rule-role">${role}<button
            aria-label=${`Remove ${role} from ${label}`}
            title=${list.length === 1 ? 'A rule names at least one role: choose Public or Any signed-in instead' : `Remove ${role}`}
            disabled=${list.length === 1}
            onClick=${() => change(list.filter((other) => other !== role).join(' '))}
          >×</button></span>`,
      )}
      ${own === '*' ? html`<span class="badge">any signed-in user (*)</span>` : null}
      ${own === '' || (own === undefined && !method) ? html`<span class="badge public">public</span>` : null}
      ${own === undefined && method ? html`<span class="muted">the resource’s rule</span>` : null}
      <select aria-label=${`Role to add to ${label}`} value=${choice} onChange=${(e: Event) => setPicked({ ...picked, [label]: inputValue(e) })}>
        <option value="">add a role</option>
        ${roles.filter((role) => !list.includes(role.name)).map((role) => html`<option value=${role.name}>${role.name}</option>`)}
      </select>
      <button class="secondary" disabled=${!choice} onClick=${() => change([...base.filter((role) => role !== choice), choice].join(' '))}>Add</button>
      <button class="secondary" disabled=${own === '*'} onClick=${() => change('*')}>Any signed-in</button>
      <button class="danger" disabled=${method ? own === '' : own === undefined} onClick=${() => change(method ? '' : null)}>Public</button>
      ${method ? html`<button class="secondary" disabled=${own === undefined} onClick=${() => change(null)}>Inherit</button>` : null}
    </div>`;
  };

  const shown = resources.filter((resource) => `${resource.path} ${resource.auth ?? 'public'}`.toLowerCase().includes(filter.toLowerCase()));
  return html`
    <section class="card" data-testid="resources">
      <h2>Resources</h2>
      <${Message} notice=${notice} />
      ${
        pending
          ? html`<div class="message ok" data-testid="impact">
          <p>Setting ${targetOf(pending)} to ${ruleText(pending.auth, pending.method)}: ${side('would gain access', pending.gain)}; ${side('would lose it', pending.lose)}.</p>
          <p class="row"><button class="primary" onClick=${() => save(pending)}>Confirm</button><button class="secondary" onClick=${() => setPending(null)}>Cancel</button></p>
        </div>`
          : null
      }
      <${BatchNote} batch=${batch} />
      <div class="row"><input placeholder="Filter by path or role" aria-label="Filter resources" value=${filter} onInput=${(e: Event) => setFilter(inputValue(e))} /></div>
      <table>
        <thead><tr><th>Path</th><th>Version</th><th>Methods</th><th>Auth</th><th>Change who may call</th></tr></thead>
        <tbody>
          ${shown.map((resource) => {
            const key = keyOf(resource);
            const target = editing[key] ?? '';
            return html`<tr data-testid=${`resource-${key}`}>
              <td><code>${resource.path}</code></td>
              <td>${resource.version}</td>
              <td>${resource.methods.join(', ')}${Object.keys(resource.requestAuth).map((method) => html`<div class="muted" data-testid=${`method-access-${method}`}>${method}: ${describeAccess(resource.access[method] ?? 'public')}</div>`)}<${SafeWritesOf} resource=${resource} /></td>
              <td>${
                resource.auth
                  ? html`<span class="badges" data-testid="auth-badge">${resource.auth.split(' ').map((role, i) => html`${i > 0 ? ' ' : ''}<span class="badge">${role}</span>`)}</span>`
                  : html`<span class="badge public">public</span>`
              }</td>
              <td class="actions">${editor(
                resource,
                target === '' ? null : target,
                html`<select aria-label=${`Rule of ${key}`} value=${target} onChange=${(e: Event) => setEditing({ ...editing, [key]: inputValue(e) })}>
                  <option value="">the resource</option>
                  ${resource.methods.map((method) => html`<option value=${method}>${method} only</option>`)}
                </select>`,
              )}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </section>`;
}
