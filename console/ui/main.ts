import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Access } from './access.js';
import { api, type Backend, listBackends, signIn, signOut } from './api.js';
import { Audit } from './audit.js';
import { Events } from './events.js';
import { History } from './history.js';
import { Keys } from './keys.js';
import { Resources } from './resources.js';
import { Roles } from './roles.js';
import { errorText, Message, type Notice, type Role } from './shared.js';
import { Users } from './users.js';

/**
 * The xmlrest console: resources and their roles, roles, users, who can call what, events and their deliveries,
 * the audit of calls, and the history of changes.
 */

interface Session {
  backend: Backend;
  user: string;
  manageable: boolean;
  /** The backend takes API keys (api_keys="on"): the Keys page is shown. */
  apiKeys: boolean;
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
      onSignedIn({ backend, user, manageable: me.manageable, apiKeys: me.apiKeys });
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
    ...(session.apiKeys && manageable ? [['keys', 'Keys']] : []),
    ['access', 'Effective access'],
    ['events', 'Events'],
    ['audit', 'Audit'],
    ['history', 'History'],
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
      ${tab === 'resources' ? html`<${Resources} roles=${roles} manageable=${manageable} onChanged=${loadRoles} />` : null}
      ${tab === 'roles' ? html`<${Roles} roles=${roles} manageable=${manageable} onChanged=${loadRoles} />` : null}
      ${tab === 'users' ? html`<${Users} roles=${roles} manageable=${manageable} onChanged=${loadRoles} />` : null}
      ${tab === 'keys' ? html`<${Keys} />` : null}
      ${tab === 'access' ? html`<${Access} manageable=${manageable} />` : null}
      ${tab === 'events' ? html`<${Events} />` : null}
      ${tab === 'audit' ? html`<${Audit} />` : null}
      ${tab === 'history' ? html`<${History} />` : null}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
