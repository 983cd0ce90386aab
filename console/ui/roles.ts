import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, inputValue, Message, type Notice, type Role } from './shared.js';

/** Roles: create one, see who holds one, delete one with its grants (after a confirmation). */
export function Roles({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [name, setName] = useState('');
  const [notice, setNotice] = useState<Notice>(null);
  const [holders, setHolders] = useState<{ role: string; users: { user_id: number; user_name: string }[] } | null>(null);
  const [deleting, setDeleting] = useState<Role | null>(null);
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      await api('POST', 'roles', { name });
      setNotice({ kind: 'ok', text: `Created role ${name}.` });
      setName('');
      onChanged();
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const show = async (role: string) => {
    try {
      setHolders({ role, ...(await api<{ users: { user_id: number; user_name: string }[] }>('GET', `roles/${encodeURIComponent(role)}/users`)) });
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const remove = async (role: Role) => {
    setDeleting(null);
    try {
      const result = await api<{ grants: number; stillNamedBy: string[] }>('DELETE', `roles/${encodeURIComponent(role.name)}`);
      const still = result.stillNamedBy.length > 0 ? ` ${result.stillNamedBy.join(', ')} still name it: nobody can call them through it now.` : '';
      setNotice({ kind: 'ok', text: `Deleted role ${role.name} and its ${result.grants} grant${result.grants === 1 ? '' : 's'}.${still}` });
      onChanged();
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  return html`
    <section class="card" data-testid="roles">
      <h2>Roles</h2>
      <${Message} notice=${notice} />
      ${
        deleting
          ? html`<div class="message error" data-testid="confirm-delete-role">
          <p>Delete the role ${deleting.name}? ${deleting.holders} user${deleting.holders === 1 ? '' : 's'} hold it: they lose it, and their tokens end.</p>
          <p class="row"><button class="danger" onClick=${() => remove(deleting)}>Delete ${deleting.name}</button><button class="secondary" onClick=${() => setDeleting(null)}>Cancel</button></p>
        </div>`
          : null
      }
      ${
        manageable
          ? html`<form class="row" onSubmit=${create}><input placeholder="New role name" aria-label="New role name" value=${name} onInput=${(e: Event) => setName(inputValue(e))} /><button class="primary" type="submit" disabled=${!name}>Create role</button></form>`
          : html`<p class="muted" data-testid="unmanaged">This backend checks credentials with its own AuthQuery over other tables: manage its users and roles there.</p>`
      }
      <table>
        <thead><tr><th>Role</th><th>Users holding it</th><th>Protects</th><th></th></tr></thead>
        <tbody>
          ${roles.map(
            (role) => html`<tr data-testid=${`role-${role.name}`}>
            <td><span class="badge">${role.name}</span></td>
            <td>${role.holders}</td>
            <td>${role.resources.join(', ') || html`<span class="muted">nothing yet</span>`}</td>
            <td class="actions">${
              manageable
                ? html`<div class="row"><button class="secondary" onClick=${() => show(role.name)}>Who holds it</button>${
                    role.grantable
                      ? html`<button class="danger" aria-label=${`Delete role ${role.name}`} onClick=${() => setDeleting(role)}>Delete</button>`
                      : html`<span class="muted">not this backend's</span>`
                  }</div>`
                : null
            }</td>
          </tr>`,
          )}
        </tbody>
      </table>
      ${holders ? html`<p data-testid="holders">Holding <span class="badge">${holders.role}</span>: ${holders.users.map((user) => user.user_name).join(', ') || 'nobody'}</p>` : null}
    </section>`;
}
