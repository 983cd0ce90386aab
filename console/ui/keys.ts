import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, inputValue, Message, type Notice, type User } from './shared.js';

/** An API key as the console lists it: never the key itself, its first 8 characters. */
interface Key {
  key_id: number;
  user_name: string | null;
  name: string;
  prefix: string;
  roles: string;
  rate_limit: string | null;
  created_on: string;
  expires_on: string | null;
  revoked_on: string | null;
  last_used_on: string | null;
}

const when = (value: string | null) => (value === null ? '-' : value.slice(0, 16).replace('T', ' '));

/**
 * API keys (docs/internals/contract.md §10), per user: the user's keys, a new one (shown
 * once, here, and never again), and revoking one, which every server refuses
 * within 5 s.
 */
export function Keys() {
  const [userName, setUserName] = useState('');
  const [user, setUser] = useState<User | null>(null);
  const [keys, setKeys] = useState<Key[]>([]);
  const [draft, setDraft] = useState({ name: '', roles: [] as string[], expires: '', rate: '' });
  const [made, setMade] = useState<{ key: string; prefix: string } | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const load = async (who: User) => setKeys((await api<{ keys: Key[] }>('GET', `keys?user=${who.user_id}`)).keys);
  const find = async (event: Event) => {
    event.preventDefault();
    setMade(null);
    try {
      const found = await api<{ users: User[] }>('GET', `users?q=${encodeURIComponent(userName)}`);
      const match = found.users.find((candidate) => candidate.user_name === userName);
      if (!match) throw new Error(`There is no user ${userName}.`);
      setUser(match);
      setDraft({ name: '', roles: [], expires: '', rate: '' });
      await load(match);
      setNotice(null);
    } catch (error) {
      setUser(null);
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    if (!user) return;
    try {
      setMade(await api<{ key: string; prefix: string }>('POST', 'keys', { user_id: user.user_id, ...draft }));
      setDraft({ name: '', roles: [], expires: '', rate: '' });
      await load(user);
      setNotice(null);
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const revoke = async (key: Key) => {
    try {
      await api('POST', `keys/${key.key_id}/revoke`);
      if (user) await load(user);
      setNotice({ kind: 'ok', text: `Revoked ${key.name} (${key.prefix}...): every server refuses it within 5 s.` });
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const toggle = (role: string) =>
    setDraft({ ...draft, roles: draft.roles.includes(role) ? draft.roles.filter((held) => held !== role) : [...draft.roles, role] });
  return html`
    <section class="card" data-testid="keys">
      <h2>API keys</h2>
      <${Message} notice=${notice} />
      <form class="row" onSubmit=${find}>
        <input placeholder="User name" aria-label="Key user" value=${userName} onInput=${(e: Event) => setUserName(inputValue(e))} />
        <button class="secondary" type="submit" disabled=${!userName}>Show keys</button>
      </form>
      ${
        made
          ? html`<div class="message ok" data-testid="new-key">
          <p>The new key, shown this once: copy it now.</p>
          <p><code data-testid="new-key-text">${made.key}</code></p>
        </div>`
          : null
      }
      ${
        user
          ? html`
        <table data-testid="key-list">
          <thead><tr><th>Name</th><th>Key</th><th>Roles</th><th>Rate</th><th>Created</th><th>Expires</th><th>Last used</th><th>State</th><th></th></tr></thead>
          <tbody>
            ${keys.map(
              (key) => html`<tr data-testid="key-row">
              <td>${key.name}</td><td><code>${key.prefix}...</code></td><td>${key.roles}</td><td>${key.rate_limit ?? '-'}</td>
              <td>${when(key.created_on)}</td><td>${when(key.expires_on)}</td><td>${when(key.last_used_on)}</td>
              <td>${key.revoked_on ? html`<span class="badge">revoked</span>` : 'active'}</td>
              <td class="actions"><div>${key.revoked_on ? null : html`<button class="secondary" onClick=${() => revoke(key)}>Revoke</button>`}</div></td>
            </tr>`,
            )}
          </tbody>
        </table>
        <h3>A new key for ${user.user_name}</h3>
        <form class="row" onSubmit=${create}>
          <input placeholder="What it is for" aria-label="Key name" value=${draft.name} onInput=${(e: Event) => setDraft({ ...draft, name: inputValue(e) })} />
          ${user.roles.map(
            (role) =>
              html`<label class="check"><input type="checkbox" aria-label=${`Key role ${role}`} checked=${draft.roles.includes(role)} onChange=${() => toggle(role)} /> ${role}</label>`,
          )}
          <input placeholder="Expires: 30d, or 2027-01-31" aria-label="Key expires" value=${draft.expires} onInput=${(e: Event) => setDraft({ ...draft, expires: inputValue(e) })} />
          <input placeholder="Rate: 1000/h" aria-label="Key rate" value=${draft.rate} onInput=${(e: Event) => setDraft({ ...draft, rate: inputValue(e) })} />
          <button class="primary" type="submit" disabled=${!draft.name || draft.roles.length === 0}>Create key</button>
        </form>`
          : null
      }
    </section>`;
}
