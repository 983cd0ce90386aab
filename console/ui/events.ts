import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { errorText, inputValue, Message, type Notice, Pager } from './shared.js';

/** An event for one webhook, as the outbox holds it (never its body here). */
interface OutboxEvent {
  id: number;
  msg_id: string;
  event: string;
  url: string;
  state: 'pending' | 'delivered' | 'failed';
  held: boolean;
  created: string;
  due: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}
interface Stopped {
  url: string;
  stopped: string;
  outbox_id: number;
}
interface Page {
  events: OutboxEvent[];
  next: number | null;
  stopped: Stopped[];
}

const when = (value: string) => new Date(value).toISOString().replace('T', ' ').slice(0, 19);

/**
 * The backend's events and their deliveries (docs/internals/contract.md §12): pending (in flight, waiting for a retry,
 * or held by a webhook a 410 stopped), delivered, failed; a failed event sent again, or every failed one.
 */
export function Events() {
  const [state, setState] = useState('');
  const [page, setPage] = useState<Page>({ events: [], next: null, stopped: [] });
  const [before, setBefore] = useState<number[]>([0]);
  const [notice, setNotice] = useState<Notice>(null);
  const load = (cursor: number, which = state) =>
    api<Page>('GET', `events?state=${which}&before=${cursor}`).then(setPage, (error) => setNotice({ kind: 'error', text: errorText(error) }));
  useEffect(() => void load(0), []);
  const retry = async (path: string, done: (retried: number) => string) => {
    try {
      const { retried } = await api<{ retried: number }>('POST', path);
      setNotice({ kind: 'ok', text: done(retried) });
      setBefore([0]);
      await load(0);
    } catch (error) {
      setNotice({ kind: 'error', text: errorText(error) });
    }
  };
  return html`
    <section class="card" data-testid="events">
      <h2>Events</h2>
      <${Message} notice=${notice} />
      ${page.stopped.map(
        (stop) => html`<div class="message error" data-testid="stopped-webhook">
          <p>${stop.url} answered 410 Gone at ${when(stop.stopped)}: nothing is sent to it. Retrying event ${stop.outbox_id} resumes it.</p>
          <button class="secondary" onClick=${() => retry(`events/${stop.outbox_id}/retry`, () => `Event ${stop.outbox_id} is due again; ${stop.url} resumes.`)}>Resume</button>
        </div>`,
      )}
      <p class="row">
        <select aria-label="Event state" value=${state} onChange=${(e: Event) => {
          const chosen = inputValue(e);
          setState(chosen);
          setBefore([0]);
          void load(0, chosen);
        }}>
          <option value="">Every state</option>
          <option value="pending">Pending</option>
          <option value="failed">Failed</option>
          <option value="delivered">Delivered</option>
        </select>
        <button class="secondary" onClick=${() => load(before.at(-1) ?? 0)}>Refresh</button>
        <button class="primary" onClick=${() => retry('events/retry-failed', (retried) => `${retried} failed event${retried === 1 ? '' : 's'} due again.`)}>
          Retry every failed event
        </button>
      </p>
      <table>
        <thead><tr><th>Id</th><th>Event</th><th>Event id</th><th>Webhook</th><th>State</th><th>Attempts</th><th>Last answer</th><th>Created</th><th>Next attempt</th><th></th></tr></thead>
        <tbody>
          ${page.events.map(
            (event) => html`<tr data-testid="event-row">
            <td>${event.id}</td>
            <td>${event.event}</td>
            <td><code>${event.msg_id}</code></td>
            <td><code>${event.url}</code></td>
            <td><span class="badge" data-testid="event-state">${event.held ? 'held' : event.state}</span></td>
            <td>${event.attempts}</td>
            <td>${event.last_error ?? event.last_status ?? '-'}</td>
            <td>${when(event.created)}</td>
            <td>${event.state === 'pending' && !event.held ? when(event.due) : '-'}</td>
            <td class="actions"><div>${
              event.state === 'failed'
                ? html`<button class="secondary" onClick=${() => retry(`events/${event.id}/retry`, () => `Event ${event.id} is due again.`)}>Retry</button>`
                : null
            }</div></td>
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
