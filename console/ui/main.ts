import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Backend, listBackends, signIn, signOut } from './api.js';

/** The xmlrest console: resources and their roles, roles, users, and who can call what. */

interface Resource {
  name: string;
  version: string;
  path: string;
  methods: string[];
  auth: string | null;
  source: string;
  etag: string;
}
interface Role {
  name: string;
  holders: number;
  resources: string[];
}
interface User {
  user_id: number;
  user_name: string;
  roles: string[];
}
interface Session {
  backend: Backend;
  user: string;
  manageable: boolean;
}
type Notice = { kind: 'ok' | 'error'; text: string } | null;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function Message({ notice }: { notice: Notice }) {
  return notice
    ? html`<div class="message ${notice.kind}" role=${notice.kind === 'error' ? 'alert' : 'status'} data-testid="message">${notice.text}</div>`
    : null;
}

function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [backends, setBackends] = useState<Backend[]>([]);
  const [chosen, setChosen] = useState('');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    listBackends().then(
      (list) => {
        setBackends(list);
        setChosen(list[0]?.name ?? '');
      },
      (error) => setNotice({ kind: 'error', text: errorText(error) }),
    );
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const backend = backends.find((candidate) => candidate.name === chosen);
    if (!backend) return;
    setBusy(true);
    setNotice(null);
    try {
      const me = await signIn(backend, user, password);
      onSignedIn({ backend, user, manageable: me.manageable });
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(false);
      setPassword('');
    }
  };
  return html`
    <form class="card signin" onSubmit=${submit} data-testid="signin">
      <h2>Sign in to the xmlrest console</h2>
      <${Message} notice=${notice} />
      <label for="backend">Backend</label>
      <select id="backend" value=${chosen} onChange=${(e: Event) => setChosen((e.target as HTMLSelectElement).value)}>
        ${backends.map((backend) => html`<option value=${backend.name}>${backend.name} (${backend.authScheme})</option>`)}
      </select>
      <label for="user">User name</label>
      <input id="user" autocomplete="username" value=${user} onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)} />
      <label for="password">Password</label>
      <input id="password" type="password" autocomplete="current-password" value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} />
      <p><button class="primary" type="submit" disabled=${busy || !user}>Sign in</button></p>
      <p class="muted">Only users holding the backend's console role get in.</p>
    </form>`;
}

function Resources({ roles, onChanged }: { roles: Role[]; onChanged: () => void }) {
  const [resources, setResources] = useState<Resource[]>([]);
  const [filter, setFilter] = useState('');
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<Notice>(null);
  const load = () =>
    api<{ resources: Resource[] }>('GET', 'resources').then(
      (data) => setResources(data.resources),
      (error) => setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => void load(), []);
  const setRole = async (resource: Resource, role: string | null) => {
    setNotice(null);
    try {
      const result = await api<{ enforcedAfterMs: number }>(
        'PUT',
        `resources/${encodeURIComponent(resource.name)}/${encodeURIComponent(resource.version)}/auth`,
        { auth: role, etag: resource.etag },
      );
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
  const shown = resources.filter((resource) => `${resource.path} ${resource.auth ?? 'public'}`.toLowerCase().includes(filter.toLowerCase()));
  return html`
    <section class="card" data-testid="resources">
      <h2>Resources</h2>
      <${Message} notice=${notice} />
      <div class="row"><input placeholder="Filter by path or role" aria-label="Filter resources" value=${filter} onInput=${(e: Event) => setFilter((e.target as HTMLInputElement).value)} /></div>
      <table>
        <thead><tr><th>Path</th><th>Version</th><th>Methods</th><th>Auth</th><th>Set role</th></tr></thead>
        <tbody>
          ${shown.map((resource) => {
            const key = `${resource.name}@${resource.version}`;
            return html`<tr data-testid=${`resource-${key}`}>
              <td><code>${resource.path}</code></td>
              <td>${resource.version}</td>
              <td>${resource.methods.join(', ')}</td>
              <td>${resource.auth ? html`<span class="badge" data-testid="auth-badge">${resource.auth}</span>` : html`<span class="badge public">public</span>`}</td>
              <td class="row">
                <select aria-label=${`Role for ${key}`} value=${picked[key] ?? ''} onChange=${(e: Event) => setPicked({ ...picked, [key]: (e.target as HTMLSelectElement).value })}>
                  <option value="">choose a role</option>
                  ${roles.map((role) => html`<option value=${role.name}>${role.name}</option>`)}
                </select>
                <button class="secondary" disabled=${!picked[key]} onClick=${() => setRole(resource, picked[key] ?? null)}>Set</button>
                <button class="danger" disabled=${!resource.auth} onClick=${() => setRole(resource, null)}>Clear</button>
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    </section>`;
}

function Roles({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [name, setName] = useState('');
  const [notice, setNotice] = useState<Notice>(null);
  const [holders, setHolders] = useState<{ role: string; users: { user_id: number; user_name: string }[] } | null>(null);
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
  return html`
    <section class="card" data-testid="roles">
      <h2>Roles</h2>
      <${Message} notice=${notice} />
      ${
        manageable
          ? html`<form class="row" onSubmit=${create}><input placeholder="New role name" aria-label="New role name" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /><button class="primary" type="submit" disabled=${!name}>Create role</button></form>`
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
            <td>${manageable ? html`<button class="secondary" onClick=${() => show(role.name)}>Who holds it</button>` : null}</td>
          </tr>`,
          )}
        </tbody>
      </table>
      ${holders ? html`<p data-testid="holders">Holding <span class="badge">${holders.role}</span>: ${holders.users.map((user) => user.user_name).join(', ') || 'nobody'}</p>` : null}
    </section>`;
}

function Users({ roles, manageable, onChanged }: { roles: Role[]; manageable: boolean; onChanged: () => void }) {
  const [page, setPage] = useState<{ users: User[]; next: number | null }>({ users: [], next: null });
  const [after, setAfter] = useState<number[]>([0]);
  const [query, setQuery] = useState('');
  const [grant, setGrant] = useState<Record<number, string>>({});
  const [newUser, setNewUser] = useState({ name: '', password: '' });
  const [notice, setNotice] = useState<Notice>(null);
  const load = (cursor: number, q = query) =>
    api<{ users: User[]; next: number | null }>('GET', `users?after=${cursor}&q=${encodeURIComponent(q)}`).then(setPage, (error) =>
      setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => {
    if (manageable) void load(0);
  }, []);
  if (!manageable)
    return html`<section class="card"><h2>Users</h2><p class="muted" data-testid="unmanaged">This backend checks credentials with its own AuthQuery over other tables: manage its users there.</p></section>`;
  const replace = (user: User) => setPage({ ...page, users: page.users.map((old) => (old.user_id === user.user_id ? user : old)) });
  const change = async (user: User, role: string, add: boolean) => {
    try {
      replace(await api<User>(add ? 'PUT' : 'DELETE', `users/${user.user_id}/roles/${encodeURIComponent(role)}`));
      setNotice({ kind: 'ok', text: add ? `Granted ${role} to ${user.user_name}.` : `Revoked ${role} from ${user.user_name}.` });
      onChanged();
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const user = await api<User>('POST', 'users', newUser);
      setNotice({ kind: 'ok', text: `Created user ${user.user_name}.` });
      setNewUser({ name: '', password: '' });
      await load(after.at(-1) ?? 0);
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  return html`
    <section class="card" data-testid="users">
      <h2>Users</h2>
      <${Message} notice=${notice} />
      <form class="row" onSubmit=${create}>
        <input placeholder="New user name" aria-label="New user name" autocomplete="off" value=${newUser.name} onInput=${(e: Event) => setNewUser({ ...newUser, name: (e.target as HTMLInputElement).value })} />
        <input type="password" placeholder="Password (8 or more)" aria-label="New user password" autocomplete="new-password" value=${newUser.password} onInput=${(e: Event) => setNewUser({ ...newUser, password: (e.target as HTMLInputElement).value })} />
        <button class="primary" type="submit" disabled=${!newUser.name || !newUser.password}>Create user</button>
      </form>
      <p class="row">
        <input placeholder="Find by name" aria-label="Find users" value=${query} onInput=${(e: Event) => setQuery((e.target as HTMLInputElement).value)} />
        <button class="secondary" onClick=${() => {
          setAfter([0]);
          void load(0);
        }}>Find</button>
      </p>
      <table>
        <thead><tr><th>Id</th><th>User</th><th>Roles</th><th>Grant</th></tr></thead>
        <tbody>
          ${page.users.map(
            (user) => html`<tr data-testid=${`user-${user.user_name}`}>
            <td>${user.user_id}</td>
            <td>${user.user_name}</td>
            <td>${user.roles.map((role) => html`<span class="chip">${role}<button aria-label=${`Revoke ${role} from ${user.user_name}`} onClick=${() => change(user, role, false)}>×</button></span>`)}</td>
            <td class="row">
              <select aria-label=${`Role to grant ${user.user_name}`} value=${grant[user.user_id] ?? ''} onChange=${(e: Event) => setGrant({ ...grant, [user.user_id]: (e.target as HTMLSelectElement).value })}>
                <option value="">choose a role</option>
                ${roles.map((role) => html`<option value=${role.name}>${role.name}</option>`)}
              </select>
              <button class="secondary" disabled=${!grant[user.user_id]} onClick=${() => change(user, grant[user.user_id]!, true)}>Grant</button>
            </td>
          </tr>`,
          )}
        </tbody>
      </table>
      <p class="row">
        <button class="secondary" disabled=${after.length < 2} onClick=${() => {
          const back = after.slice(0, -1);
          setAfter(back);
          void load(back.at(-1) ?? 0);
        }}>Previous page</button>
        <button class="secondary" disabled=${page.next === null} onClick=${() => {
          setAfter([...after, page.next!]);
          void load(page.next!);
        }}>Next page</button>
      </p>
    </section>`;
}

function Access({ manageable }: { manageable: boolean }) {
  const [userId, setUserId] = useState('');
  const [forUser, setForUser] = useState<{ user: User; resources: (Resource & { because: string })[] } | null>(null);
  const [resources, setResources] = useState<Resource[]>([]);
  const [chosen, setChosen] = useState('');
  const [forResource, setForResource] = useState<{ public: boolean; role: string | null; users: { user_id: number; user_name: string }[] } | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  useEffect(() => void api<{ resources: Resource[] }>('GET', 'resources').then((data) => setResources(data.resources)), []);
  const byUser = async (event: Event) => {
    event.preventDefault();
    try {
      setForUser(await api('GET', `users/${encodeURIComponent(userId)}/access`));
      setNotice(null);
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const byResource = async (key: string) => {
    setChosen(key);
    const [name, version] = key.split('@');
    try {
      setForResource(await api('GET', `resources/${encodeURIComponent(name ?? '')}/${encodeURIComponent(version ?? '')}/access`));
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  return html`
    <section class="card" data-testid="access">
      <h2>Effective access</h2>
      <${Message} notice=${notice} />
      ${
        manageable
          ? html`<form class="row" onSubmit=${byUser}>
        <input placeholder="User id" aria-label="User id" value=${userId} onInput=${(e: Event) => setUserId((e.target as HTMLInputElement).value)} />
        <button class="secondary" type="submit" disabled=${!userId}>What can this user call?</button>
      </form>`
          : null
      }
      ${forUser ? html`<div data-testid="user-access"><p><b>${forUser.user.user_name}</b> can call:</p><ul>${forUser.resources.map((r) => html`<li><code>${r.methods.join(', ')} ${r.path}</code> — ${r.because === 'public' ? html`<span class="badge public">public</span>` : html`through <span class="badge">${r.because}</span>`}</li>`)}</ul></div>` : null}
      <p class="row">
        <select aria-label="Resource" value=${chosen} onChange=${(e: Event) => byResource((e.target as HTMLSelectElement).value)}>
          <option value="">Who can call this resource?</option>
          ${resources.map((r) => html`<option value=${`${r.name}@${r.version}`}>${r.path}</option>`)}
        </select>
      </p>
      ${forResource ? html`<p data-testid="resource-access">${forResource.public ? 'Everyone: it is public.' : html`Users holding <span class="badge">${forResource.role}</span>: ${forResource.users.map((u) => u.user_name).join(', ') || 'nobody yet'}`}</p>` : null}
    </section>`;
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [tab, setTab] = useState('resources');
  const [roles, setRoles] = useState<Role[]>([]);
  const [manageable, setManageable] = useState(true);
  const loadRoles = () =>
    api<{ roles: Role[]; manageable: boolean }>('GET', 'roles').then(
      (data) => {
        setRoles(data.roles);
        setManageable(data.manageable);
      },
      () => setRoles([]),
    );
  useEffect(() => {
    if (session) void loadRoles();
  }, [session]);
  if (!session) return html`<${SignIn} onSignedIn=${setSession} />`;
  const tabs = [
    ['resources', 'Resources'],
    ['roles', 'Roles'],
    ['users', 'Users'],
    ['access', 'Effective access'],
  ];
  return html`
    <header>
      <h1>xmlrest console</h1>
      <nav>${tabs.map(([id, label]) => html`<button aria-current=${tab === id ? 'page' : undefined} onClick=${() => setTab(id!)}>${label}</button>`)}</nav>
      <span class="who" data-testid="who">${session.user} on ${session.backend.name}</span>
      <button class="secondary" onClick=${() => {
        signOut();
        setSession(null);
      }}>Sign out</button>
    </header>
    <main>
      ${tab === 'resources' ? html`<${Resources} roles=${roles} onChanged=${loadRoles} />` : null}
      ${tab === 'roles' ? html`<${Roles} roles=${roles} manageable=${manageable} onChanged=${loadRoles} />` : null}
      ${tab === 'users' ? html`<${Users} roles=${roles} manageable=${manageable} onChanged=${loadRoles} />` : null}
      ${tab === 'access' ? html`<${Access} manageable=${manageable} />` : null}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
