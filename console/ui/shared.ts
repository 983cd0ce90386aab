import { html } from 'htm/preact';
import type { UserTools as Tools } from '../tools.js';

/** What the console's screens share: the shapes the API answers with, and how a notice shows. */
export interface Resource {
  name: string;
  version: string;
  path: string;
  methods: string[];
  auth: string | null;
  /** Each method's access: `public`, `*`, or the roles. */
  access: Record<string, 'public' | '*' | string[]>;
  /** Each method's own `auth` as the file writes it (`""` a public method), for the methods that have one. */
  requestAuth: Record<string, string>;
  source: string;
  etag: string;
  /** Each method's safe writes (docs/internals/contract.md §15), for the methods that have any. */
  safeWrites: Record<string, SafeWrites>;
}
/** What a method does of docs/internals/contract.md §15, as its module says. */
export interface SafeWrites {
  validator?: true;
  version?: { column: string; required: boolean };
  idempotency?: 'required';
  maxAge?: number;
}
export interface Role {
  name: string;
  holders: number;
  resources: string[];
  /** Whether this backend's console may grant, revoke and delete it (a role its backend uses, console/scope.ts). */
  grantable: boolean;
}
export interface User {
  user_id: number;
  user_name: string;
  disabled: boolean;
  roles: string[];
  /** The roles whose grant ends, each with its end (ISO). */
  ends: Record<string, string>;
  /** The user's tenant (null: none), on a backend whose tenant is a column of usr. */
  tenant?: string | null;
}
/** The MCP tools a user sees on the signed-in backend, each with its route; null when the backend has no MCP endpoint. */
export type UserTools = Tools | null;
/** A backend's tenant as the users page shows it (console/users-api.ts `GET tenant`). */
export type TenantInfo = { type: 'integer' | 'text'; column: string; settable: boolean } | null;
export type Notice = { kind: 'ok' | 'error'; text: string } | null;

export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function Message({ notice }: { notice: Notice }) {
  return notice
    ? html`<div class="message ${notice.kind}" role=${notice.kind === 'error' ? 'alert' : 'status'} data-testid="message">${notice.text}</div>`
    : null;
}

/** A list of names as a person writes it: "a, b and 3 more". */
export function names(list: string[], count: number): string {
  const shown = list.join(', ');
  return count > list.length ? `${shown} and ${count - list.length} more` : shown;
}

/** A grant's end as a person reads it, in UTC: `2026-12-01 18:00Z`. */
export const endText = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;

export const inputValue = (event: Event) => (event.target as HTMLInputElement | HTMLSelectElement).value;

/**
 * The buttons under a list paged by cursor: `cursors` are the pages so far (the first 0), `go` shows the page of
 * the last of those it is given.
 */
export function Pager({
  cursors,
  next,
  go,
  labels = ['Newer', 'Older'],
}: {
  cursors: number[];
  next: number | null;
  go: (cursors: number[]) => void;
  labels?: [string, string];
}) {
  return html`<p class="row">
    <button class="secondary" disabled=${cursors.length < 2} onClick=${() => go(cursors.slice(0, -1))}>${labels[0]}</button>
    <button class="secondary" disabled=${next === null} onClick=${() => go([...cursors, next!])}>${labels[1]}</button>
  </p>`;
}
