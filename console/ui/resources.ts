import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, inputValue, Message, type Notice, names, type Resource, type Role } from './shared.js';

interface ImpactSide {
  count: number;
  users: string[];
  anonymous: boolean;
}

const describeAccess = (access: 'public' | '*' | string[]) => (access === 'public' ? 'public' : access === '*' ? 'any signed-in user' : access.join(' or '));

/**
 * Resources and their access, method by method. Setting or clearing a
 * resource's role shows first who would gain and who would lose access, and
 * is saved only when the operator confirms.
 */
export function Resources({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [resources, setResources] = useState<Resource[]>([]);
  const [filter, setFilter] = useState('');
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [pending, setPending] = useState<{ key: string; resource: Resource; role: string | null; gain: ImpactSide; lose: ImpactSide } | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const load = () =>
    api<{ resources: Resource[] }>('GET', 'resources').then(
      (data) => setResources(data.resources),
      (error) => setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => void load(), []);
  const path = (resource: Resource) => `resources/${encodeURIComponent(resource.name)}/${encodeURIComponent(resource.version)}`;

  /** Before anything is saved: who gains and who loses. Where the users live elsewhere, it saves at once. */
  const propose = async (resource: Resource, role: string | null) => {
    setNotice(null);
    if (!manageable) return save(resource, role);
    try {
      const impact = await api<{ gain: ImpactSide; lose: ImpactSide }>('GET', `${path(resource)}/impact?auth=${encodeURIComponent(role ?? '')}`);
      setPending({ key: `${resource.name}@${resource.version}`, resource, role, ...impact });
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const save = async (resource: Resource, role: string | null) => {
    setPending(null);
    try {
      const result = await api<{ enforcedAfterMs: number }>('PUT', `${path(resource)}/auth`, { auth: role, etag: resource.etag });
      setNotice({
        kind: 'ok',
        text: `${role === null ? 'Cleared the role of' : `Set role ${role} on`} ${resource.name} v${resource.version}: the server enforces it now (${result.enforcedAfterMs} ms).`,
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
  const shown = resources.filter((resource) => `${resource.path} ${resource.auth ?? 'public'}`.toLowerCase().includes(filter.toLowerCase()));
  return html`
    <section class="card" data-testid="resources">
      <h2>Resources</h2>
      <${Message} notice=${notice} />
      ${
        pending
          ? html`<div class="message ok" data-testid="impact">
          <p>${pending.role === null ? 'Clearing the role of' : `Setting ${pending.role} on`} ${pending.resource.name} v${pending.resource.version}: ${side('would gain access', pending.gain)}; ${side('would lose it', pending.lose)}.</p>
          <p class="row"><button class="primary" onClick=${() => save(pending.resource, pending.role)}>Confirm</button><button class="secondary" onClick=${() => setPending(null)}>Cancel</button></p>
        </div>`
          : null
      }
      <div class="row"><input placeholder="Filter by path or role" aria-label="Filter resources" value=${filter} onInput=${(e: Event) => setFilter(inputValue(e))} /></div>
      <table>
        <thead><tr><th>Path</th><th>Version</th><th>Methods</th><th>Auth</th><th>Set role</th></tr></thead>
        <tbody>
          ${shown.map((resource) => {
            const key = `${resource.name}@${resource.version}`;
            const own = Object.entries(resource.access).filter(
              ([, access]) =>
                describeAccess(access) !== (resource.auth === null ? 'public' : describeAccess(resource.auth === '*' ? '*' : resource.auth.split(' '))),
            );
            return html`<tr data-testid=${`resource-${key}`}>
              <td><code>${resource.path}</code></td>
              <td>${resource.version}</td>
              <td>${resource.methods.join(', ')}${own.map(([method, access]) => html`<div class="muted" data-testid=${`method-access-${method}`}>${method}: ${describeAccess(access)}</div>`)}</td>
              <td>${resource.auth ? html`<span class="badge" data-testid="auth-badge">${resource.auth}</span>` : html`<span class="badge public">public</span>`}</td>
              <td class="row">
                <select aria-label=${`Role for ${key}`} value=${picked[key] ?? ''} onChange=${(e: Event) => setPicked({ ...picked, [key]: inputValue(e) })}>
                  <option value="">choose a role</option>
                  <option value="*">any signed-in user (*)</option>
                  ${roles.map((role) => html`<option value=${role.name}>${role.name}</option>`)}
                </select>
                <button class="secondary" disabled=${!picked[key]} onClick=${() => propose(resource, picked[key] ?? null)}>Set</button>
                <button class="danger" disabled=${!resource.auth} onClick=${() => propose(resource, null)}>Clear</button>
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    </section>`;
}
