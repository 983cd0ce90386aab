import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, inputValue, Message, type Notice, Pager } from './shared.js';

/** One audited call (xmlrest_api_audit): who, what, when, the answer, and the parameters with secrets left out. */
interface Entry {
  id: number;
  at: string;
  resource: string;
  version: string;
  method: string;
  user_id: string | null;
  user_name: string | null;
  key_prefix: string | null;
  status: number;
  request_id: string;
  address: string;
  params: string | null;
}

const FILTERS = ['user', 'resource', 'from', 'to', 'status'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The calls of the backend's audited routes (`audit="true"`, docs/internals/contract.md §12), filtered by user, resource, time and status. */
export function Audit() {
  const [filters, setFilters] = useState<Filters>({ user: '', resource: '', from: '', to: '', status: '' });
  const [page, setPage] = useState<{ entries: Entry[]; next: number | null }>({ entries: [], next: null });
  const [before, setBefore] = useState<number[]>([0]);
  const [notice, setNotice] = useState<Notice>(null);
  const load = (cursor: number) => {
    const query = new URLSearchParams({ ...filters, before: String(cursor) });
    return api<{ entries: Entry[]; next: number | null }>('GET', `audit?${query}`).then(
      (data) => {
        setPage(data);
        setNotice(null);
      },
      (error) => setNotice({ kind: 'error', text: errorText(error) }),
    );
  };
  useEffect(() => void load(0), []);
  const field = (name: keyof Filters, label: string, type = 'text', placeholder = '') =>
    html`<input type=${type} aria-label=${label} placeholder=${placeholder} value=${filters[name]} onInput=${(e: Event) => setFilters({ ...filters, [name]: inputValue(e) })} />`;
  return html`
    <section class="card" data-testid="audit">
      <h2>Audit</h2>
      <${Message} notice=${notice} />
      <form class="row" onSubmit=${(event: Event) => {
        event.preventDefault();
        setBefore([0]);
        void load(0);
      }}>
        ${field('user', 'Audit user', 'text', 'User name or id')}
        ${field('resource', 'Audit resource', 'text', 'Resource')}
        <label class="check">From (UTC) ${field('from', 'Audit from', 'datetime-local')}</label>
        <label class="check">To ${field('to', 'Audit to', 'datetime-local')}</label>
        ${field('status', 'Audit status', 'text', 'Status: 200 or 4xx')}
        <button class="secondary" type="submit">Show</button>
      </form>
      <table>
        <thead><tr><th>When (UTC)</th><th>Call</th><th>User</th><th>Key</th><th>Status</th><th>Request id</th><th>From</th><th>Parameters</th></tr></thead>
        <tbody>
          ${page.entries.map(
            (entry) => html`<tr data-testid="audit-entry">
            <td>${new Date(entry.at).toISOString().replace('T', ' ').slice(0, 23)}</td>
            <td>${entry.method} ${entry.resource} v${entry.version}</td>
            <td>${entry.user_id === null ? '-' : entry.user_name ? `${entry.user_name} (${entry.user_id})` : entry.user_id}</td>
            <td>${entry.key_prefix ? html`<code>${entry.key_prefix}...</code>` : '-'}</td>
            <td>${entry.status}</td>
            <td><code>${entry.request_id}</code></td>
            <td><code>${entry.address}</code></td>
            <td><code>${entry.params ?? '-'}</code></td>
          </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} cursors=${before} next=${page.next} go=${(cursors: number[]) => {
        setBefore(cursors);
        void load(cursors.at(-1) ?? 0);
      }} />
    </section>`;
}
