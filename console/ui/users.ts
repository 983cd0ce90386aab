import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { endText, errorText, inputValue, Message, type Notice, Pager, type Role, type TenantInfo, type User } from './shared.js';

/**
 * Users, found by name: create them, grant and revoke roles, disable and
 * enable them, reset a password, remove one (after a confirmation).
 */
export function Users({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [page, setPage] = useState<{ users: User[]; next: number | null }>({ users: [], next: null });
  const [after, setAfter] = useState<number[]>([0]);
  const [query, setQuery] = useState('');
  const [grant, setGrant] = useState<Record<number, string>>({});
  /** When each row's grant is to end: empty for good, `8h`, `7d` or an ISO time (console/grants.ts reads it). */
  const [ends, setEnds] = useState<Record<number, string>>({});
  const [newUser, setNewUser] = useState({ name: '', password: '' });
  const [resetting, setResetting] = useState<{ user: User; password: string } | null>(null);
  const [removing, setRemoving] = useState<User | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [tenant, setTenant] = useState<TenantInfo>(null);
  /** Each row's tenant as typed, before it is set. */
  const [tenants, setTenants] = useState<Record<number, string>>({});
  const load = (cursor: number, q = query) =>
    api<{ users: User[]; next: number | null }>('GET', `users?after=${cursor}&q=${encodeURIComponent(q)}`).then(setPage, (error) =>
      setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => {
    void api<{ tenant: TenantInfo }>('GET', 'tenant').then(
      (data) => setTenant(data.tenant),
      () => setTenant(null),
    );
    if (manageable) void load(0);
  }, []);
  const queried = tenant !== null && !tenant.settable;
  const tenantNote = queried
    ? html`<p class="muted" data-testid="tenant-queried">Its users' tenant comes from its TenantQuery: there is nothing to set here; change it in the tables that query reads.</p>`
    : null;
  if (!manageable)
    return html`<section class="card"><h2>Users</h2><p class="muted" data-testid="unmanaged">This backend checks credentials with its own AuthQuery over other tables: manage its users there.</p>${tenantNote}</section>`;
  const settable = tenant?.settable === true;
  const setTenantOf = (user: User) => {
    const typed = (tenants[user.user_id] ?? '').trim();
    return act(
      () => api<User>('PUT', `users/${user.user_id}/tenant`, { tenant: typed === '' ? null : typed }),
      `${typed === '' ? `Cleared the tenant of ${user.user_name}` : `Moved ${user.user_name} to tenant ${typed}`}; their tokens, sessions and API keys ended.`,
    );
  };
  const replace = (user: User) => setPage({ ...page, users: page.users.map((old) => (old.user_id === user.user_id ? user : old)) });
  /** One call that changes a user, then its row and a notice; `fresh` false when the user is gone. */
  const act = async (call: () => Promise<User | unknown>, done: string, fresh = true) => {
    setNotice(null);
    try {
      const result = await call();
      if (fresh) replace(result as User);
      else await load(after.at(-1) ?? 0);
      setNotice({ kind: 'ok', text: done });
      onChanged();
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const role = (user: User, name: string, add: boolean) => {
    const end = add ? (ends[user.user_id] ?? '').trim() : '';
    const body = end === '' ? undefined : /^\d{4}-/.test(end) ? { until: end } : { for: end };
    return act(
      () => api<User>(add ? 'PUT' : 'DELETE', `users/${user.user_id}/roles/${encodeURIComponent(name)}`, body),
      add ? `Granted ${name} to ${user.user_name}${end === '' ? '' : ', until the time shown beside it'}.` : `Revoked ${name} from ${user.user_name}.`,
    );
  };
  const create = async (event: Event) => {
    event.preventDefault();
    await act(() => api<User>('POST', 'users', newUser), `Created user ${newUser.name}.`, false);
    setNewUser({ name: '', password: '' });
  };
  const reset = async (event: Event) => {
    event.preventDefault();
    if (!resetting) return;
    const { user, password } = resetting;
    setResetting(null);
    await act(() => api<User>('PUT', `users/${user.user_id}/password`, { password }), `Reset the password of ${user.user_name}; their tokens ended.`);
  };
  return html`
    <section class="card" data-testid="users">
      <h2>Users</h2>
      <${Message} notice=${notice} />
      ${tenantNote}
      ${
        removing
          ? html`<div class="message error" data-testid="confirm-remove-user">
          <p>Remove ${removing.user_name}? Their roles go with them, and their tokens end.</p>
          <p class="row"><button class="danger" onClick=${() => {
            const user = removing;
            setRemoving(null);
            void act(() => api('DELETE', `users/${user.user_id}`), `Removed ${user.user_name}.`, false);
          }}>Remove ${removing.user_name}</button><button class="secondary" onClick=${() => setRemoving(null)}>Cancel</button></p>
        </div>`
          : null
      }
      ${
        resetting
          ? html`<form class="row message ok" onSubmit=${reset} data-testid="reset-password">
          New password for ${resetting.user.user_name}:
          <input type="password" aria-label="New password" autocomplete="new-password" value=${resetting.password} onInput=${(e: Event) => setResetting({ ...resetting, password: inputValue(e) })} />
          <button class="primary" type="submit" disabled=${resetting.password.length < 8}>Set password</button>
          <button class="secondary" type="button" onClick=${() => setResetting(null)}>Cancel</button>
        </form>`
          : null
      }
      <form class="row" onSubmit=${create}>
        <input placeholder="New user name" aria-label="New user name" autocomplete="off" value=${newUser.name} onInput=${(e: Event) => setNewUser({ ...newUser, name: inputValue(e) })} />
        <input type="password" placeholder="Password (8 or more)" aria-label="New user password" autocomplete="new-password" value=${newUser.password} onInput=${(e: Event) => setNewUser({ ...newUser, password: inputValue(e) })} />
        <button class="primary" type="submit" disabled=${!newUser.name || !newUser.password}>Create user</button>
      </form>
      <form class="row" onSubmit=${(e: Event) => {
        e.preventDefault();
        setAfter([0]);
        void load(0);
      }}>
        <input placeholder="Find by name" aria-label="Find users" value=${query} onInput=${(e: Event) => setQuery(inputValue(e))} />
        <button class="secondary" type="submit">Find</button>
      </form>
      <table>
        <thead><tr><th>Id</th><th>User</th>${settable ? html`<th>Tenant</th>` : null}<th>Roles</th><th>Grant</th><th></th></tr></thead>
        <tbody>
          ${page.users.map(
            (user) => html`<tr data-testid=${`user-${user.user_name}`}>
            <td>${user.user_id}</td>
            <td>${user.user_name}${user.disabled ? html` <span class="badge" data-testid="disabled-badge">disabled</span>` : null}</td>
            ${
              settable
                ? html`<td class="actions"><div class="row">
              <span data-testid=${`tenant-${user.user_name}`}>${user.tenant ?? html`<span class="muted">none</span>`}</span>
              <input class="tenant" placeholder=${tenant!.type === 'integer' ? 'tenant id' : 'tenant'} aria-label=${`Tenant of ${user.user_name}`} value=${tenants[user.user_id] ?? ''} onInput=${(e: Event) => setTenants({ ...tenants, [user.user_id]: inputValue(e) })} />
              <button class="secondary" aria-label=${`Set the tenant of ${user.user_name}`} onClick=${() => setTenantOf(user)}>Set</button>
            </div></td>`
                : null
            }
            <td>${user.roles.map(
              (name) =>
                html`<span class="chip" data-testid=${`grant-${user.user_name}-${name}`}>${name}${user.ends[name] ? html` <span class="muted" title="The grant ends then: every server stops admitting it within 5 s">until ${endText(user.ends[name]!)}</span>` : null}<button aria-label=${`Revoke ${name} from ${user.user_name}`} onClick=${() => role(user, name, false)}>×</button></span>`,
            )}</td>
            <td class="actions"><div class="row">
              <select aria-label=${`Role to grant ${user.user_name}`} value=${grant[user.user_id] ?? ''} onChange=${(e: Event) => setGrant({ ...grant, [user.user_id]: inputValue(e) })}>
                <option value="">choose a role</option>
                ${roles.filter((choice) => choice.grantable).map((choice) => html`<option value=${choice.name}>${choice.name}</option>`)}
              </select>
              <input class="ends" placeholder="for good, or 8h, 7d, 2026-12-01T18:00Z" aria-label=${`Grant to ${user.user_name} until`} value=${ends[user.user_id] ?? ''} onInput=${(e: Event) => setEnds({ ...ends, [user.user_id]: inputValue(e) })} />
              <button class="secondary" disabled=${!grant[user.user_id]} onClick=${() => role(user, grant[user.user_id]!, true)}>Grant</button>
            </div></td>
            <td class="actions"><div class="row">
              <button class="secondary" aria-label=${`${user.disabled ? 'Enable' : 'Disable'} ${user.user_name}`} onClick=${() => act(() => api<User>('POST', `users/${user.user_id}/${user.disabled ? 'enable' : 'disable'}`), `${user.disabled ? 'Enabled' : 'Disabled'} ${user.user_name}.`)}>${user.disabled ? 'Enable' : 'Disable'}</button>
              <button class="secondary" aria-label=${`Reset the password of ${user.user_name}`} onClick=${() => setResetting({ user, password: '' })}>Reset password</button>
              <button class="danger" aria-label=${`Remove ${user.user_name}`} onClick=${() => setRemoving(user)}>Remove</button>
            </div></td>
          </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} cursors=${after} next=${page.next} labels=${['Previous page', 'Next page']} go=${(cursors: number[]) => {
        setAfter(cursors);
        void load(cursors.at(-1) ?? 0);
      }} />
    </section>`;
}
