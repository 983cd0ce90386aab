import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, Message, type Notice, Pager } from './shared.js';

interface Entry {
  id: number;
  at: string;
  actor: string;
  action: string;
  target: string;
  detail: string;
  address: string;
}

/** Every change made on this backend's console: who, what, when and from where, the newest first. */
export function History() {
  const [page, setPage] = useState<{ entries: Entry[]; next: number | null }>({ entries: [], next: null });
  const [before, setBefore] = useState<number[]>([0]);
  const [notice, setNotice] = useState<Notice>(null);
  const load = (cursor: number) =>
    api<{ entries: Entry[]; next: number | null }>('GET', `history?before=${cursor}`).then(setPage, (error) =>
      setNotice({ kind: 'error', text: errorText(error) }),
    );
  useEffect(() => void load(0), []);
  return html`
    <section class="card" data-testid="history">
      <h2>History</h2>
      <${Message} notice=${notice} />
      <table>
        <thead><tr><th>When</th><th>Who</th><th>What</th><th>Of what</th><th>Detail</th><th>From</th></tr></thead>
        <tbody>
          ${page.entries.map(
            (entry) => html`<tr data-testid="history-entry">
            <td>${new Date(entry.at).toISOString().replace('T', ' ').slice(0, 19)}</td>
            <td>${entry.actor}</td>
            <td>${entry.action}</td>
            <td>${entry.target}</td>
            <td>${entry.detail}</td>
            <td><code>${entry.address}</code></td>
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
