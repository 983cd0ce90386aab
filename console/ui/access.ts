import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { Explanation } from '../access.js';
import { api } from './api.js';
import { endText, errorText, inputValue, Message, type Notice, type Resource, type User, type UserTools } from './shared.js';

/**
 * Who can call what: a user's whole reach (found by name), who can call a
 * resource, and why a user may or may not call one route (as `xmlrest
 * explain` answers it).
 */
export function Access({ manageable }: { manageable: boolean }) {
  const [userName, setUserName] = useState('');
  const [forUser, setForUser] = useState<{ user: User; resources: (Resource & { because: string })[]; mcp: UserTools } | null>(null);
  const [resources, setResources] = useState<Resource[]>([]);
  const [chosen, setChosen] = useState('');
  const [forResource, setForResource] = useState<{ public: boolean; role: string | null; users: { user_id: number; user_name: string }[] } | null>(null);
  const [question, setQuestion] = useState({ user: '', method: 'GET', path: '' });
  /** The user's password, for a backend with its own AuthQuery: only that query, run with it, knows the roles. */
  const [password, setPassword] = useState('');
  const [answer, setAnswer] = useState<Explanation | null>(null);
  const [claimsQuestion, setClaimsQuestion] = useState({ claims: '', method: 'GET', path: '' });
  const [claimsAnswer, setClaimsAnswer] = useState<(Explanation & { user: string }) | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  useEffect(() => void api<{ resources: Resource[] }>('GET', 'resources').then((data) => setResources(data.resources)), []);
  const byUser = async (event: Event) => {
    event.preventDefault();
    try {
      const found = await api<{ users: User[] }>('GET', `users?q=${encodeURIComponent(userName)}`);
      const user = found.users.find((candidate) => candidate.user_name === userName);
      if (!user) throw new Error(`There is no user ${userName}.`);
      setForUser(await api('GET', `users/${user.user_id}/access`));
      setNotice(null);
    } catch (error) {
      setForUser(null);
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
  const explain = async (event: Event) => {
    event.preventDefault();
    try {
      setAnswer(
        password === ''
          ? await api<Explanation>(
              'GET',
              `explain?user=${encodeURIComponent(question.user)}&method=${question.method}&path=${encodeURIComponent(question.path)}`,
            )
          : await api<Explanation>('POST', 'explain', { ...question, password }),
      );
      setPassword('');
      setNotice(null);
    } catch (error) {
      setAnswer(null);
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const explainClaims = async (event: Event) => {
    event.preventDefault();
    try {
      setClaimsAnswer(
        await api<Explanation & { user: string }>('POST', 'explain-claims', {
          claims: claimsOf(claimsQuestion.claims),
          method: claimsQuestion.method,
          path: claimsQuestion.path,
        }),
      );
      setNotice(null);
    } catch (error) {
      setClaimsAnswer(null);
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  const needs = (value: Explanation['needs']) =>
    value === 'public'
      ? 'nothing: it is public'
      : value === '*'
        ? 'any role at all'
        : value.length === 1
          ? `the role ${value[0]}`
          : `any one of the roles ${value.join(', ')}`;
  return html`
    <section class="card" data-testid="access">
      <h2>Effective access</h2>
      <${Message} notice=${notice} />
      ${
        manageable
          ? html`<form class="row" onSubmit=${byUser}>
        <input placeholder="User name" aria-label="User name" value=${userName} onInput=${(e: Event) => setUserName(inputValue(e))} />
        <button class="secondary" type="submit" disabled=${!userName}>What can this user call?</button>
      </form>`
          : null
      }
      ${forUser ? html`<div data-testid="user-access"><p><b>${forUser.user.user_name}</b> can call:</p><ul>${forUser.resources.map((r) => html`<li><code>${r.methods.join(', ')} ${r.path}</code> — ${r.because === 'public' ? html`<span class="badge public">public</span>` : html`through <span class="badge">${r.because}</span>`}</li>`)}</ul></div>` : null}
      ${forUser?.mcp ? html`<${ToolList} user=${forUser.user.user_name} mcp=${forUser.mcp} />` : null}
      <p class="row">
        <select aria-label="Resource" value=${chosen} onChange=${(e: Event) => byResource(inputValue(e))}>
          <option value="">Who can call this resource?</option>
          ${resources.map((r) => html`<option value=${`${r.name}@${r.version}`}>${r.path}</option>`)}
        </select>
      </p>
      ${forResource ? html`<p data-testid="resource-access">${forResource.public ? 'Everyone: it is public.' : html`Users admitted by <span class="badge">${forResource.role}</span>: ${forResource.users.map((u) => u.user_name).join(', ') || 'nobody yet'}`}</p>` : null}
      <h3>Why may, or may not, a user call a route?</h3>
      <form class="row" onSubmit=${explain}>
        <input placeholder="User name" aria-label="Explain user" value=${question.user} onInput=${(e: Event) => setQuestion({ ...question, user: inputValue(e) })} />
        <select aria-label="Explain method" value=${question.method} onChange=${(e: Event) => setQuestion({ ...question, method: inputValue(e) })}>
          ${['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => html`<option value=${method}>${method}</option>`)}
        </select>
        <input placeholder="/backend/v1.0/resource" aria-label="Explain path" value=${question.path} onInput=${(e: Event) => setQuestion({ ...question, path: inputValue(e) })} />
        ${
          manageable
            ? null
            : html`<input type="password" placeholder="Their password (their roles come from it)" aria-label="Explain password" autocomplete="off" value=${password} onInput=${(e: Event) => setPassword(inputValue(e))} />`
        }
        <button class="secondary" type="submit" disabled=${!question.user || !question.path}>Explain</button>
      </form>
      ${
        answer
          ? html`<div class="message ${answer.allowed ? 'ok' : 'error'}" data-testid="explanation">
          <p><b>${answer.allowed === null ? 'Cannot tell' : answer.allowed ? 'Allowed' : 'Denied'}</b>: ${answer.method} ${answer.path} on ${answer.backend}.</p>
          <p>The route needs ${needs(answer.needs)}; ${question.user} holds ${answer.holds === null ? 'roles unknown here' : answer.holds.map((role) => (answer.ends?.[role] ? `${role} (until ${endText(answer.ends[role]!)})` : role)).join(', ') || 'no role'}; because ${answer.reason}.</p>
        </div>`
          : null
      }
      <h3>And the user of an identity provider's token?</h3>
      <form class="row" onSubmit=${explainClaims}>
        <textarea rows="3" style="flex: 1 1 24rem" placeholder='The token, or its claims: {"iss": "...", "aud": "...", "roles": [...]}' aria-label="Explain claims" value=${claimsQuestion.claims} onInput=${(e: Event) => setClaimsQuestion({ ...claimsQuestion, claims: inputValue(e) })}></textarea>
        <select aria-label="Explain claims method" value=${claimsQuestion.method} onChange=${(e: Event) => setClaimsQuestion({ ...claimsQuestion, method: inputValue(e) })}>
          ${['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => html`<option value=${method}>${method}</option>`)}
        </select>
        <input placeholder="/backend/v1.0/resource" aria-label="Explain claims path" value=${claimsQuestion.path} onInput=${(e: Event) => setClaimsQuestion({ ...claimsQuestion, path: inputValue(e) })} />
        <button class="secondary" type="submit" disabled=${!claimsQuestion.claims || !claimsQuestion.path}>Explain</button>
      </form>
      ${
        claimsAnswer
          ? html`<div class="message ${claimsAnswer.allowed ? 'ok' : 'error'}" data-testid="claims-explanation">
          <p><b>${claimsAnswer.allowed ? 'Allowed' : 'Denied'}</b>: ${claimsAnswer.method} ${claimsAnswer.path} on ${claimsAnswer.backend}.</p>
          <p>The route needs ${needs(claimsAnswer.needs)}; ${claimsAnswer.user} holds ${claimsAnswer.holds === null ? 'roles unknown here' : claimsAnswer.holds.join(', ') || 'no role'}; because ${claimsAnswer.reason}.</p>
        </div>`
          : null
      }
    </section>`;
}

/**
 * The MCP tools a user's agent sees on this backend (docs/internals/contract.md §16): what tools/list lists to the
 * user's own credentials, by the server's own tool list and rule. A tool is its route: the list above, as tools.
 */
function ToolList({ user, mcp }: { user: string; mcp: NonNullable<UserTools> }) {
  return html`<div data-testid="user-tools">
    <p>Through MCP (<code>POST ${mcp.endpoint}</code>), <b>${user}</b>'s agent sees ${mcp.tools.length === 0 ? 'no tool' : mcp.tools.length === 1 ? '1 tool' : `${mcp.tools.length} tools`}:</p>
    <ul>${mcp.tools.map(
      (tool) =>
        html`<li data-testid=${`tool-${tool.name}`}><code>${tool.name}</code> ${tool.readOnly ? html`<span class="badge public">read-only</span>` : html`<span class="badge">writes</span>`} <span class="muted">${tool.method} ${tool.path}</span></li>`,
    )}</ul>
  </div>`;
}

/** A token's claims from what was pasted: the JSON payload, or the token (its payload read, never trusted: explain reasons about claims only). */
function claimsOf(text: string): unknown {
  const trimmed = text.trim();
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(trimmed)) {
    const base64 = trimmed.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  try {
    return JSON.parse(trimmed);
  } catch {
    throw new Error('Paste a token, or its claims as a JSON object.');
  }
}
