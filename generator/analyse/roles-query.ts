import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Backend } from '../ir.js';
import { scanSql } from '../sql/index.js';
import { AttributeReader, describePlaceholder, type RawElement } from './elements.js';

/**
 * `RolesQuery` in backend.xml (docs/internals/contract.md §10): on a backend with
 * sessions and its own AuthQuery, the roles its user holds now, asked at
 * every refresh. The default user tables need none: their triggers end the
 * sessions of a user deleted, disabled or stripped of a role. Tables of a
 * backend's own are watched by nothing of xmlrest's, so without this query a
 * refresh token would keep minting tokens for a user the AuthQuery no longer
 * admits, with the roles of the sign-in, for the whole session_lifetime.
 */
export function analyseRolesQuery(element: RawElement, diagnostics: Diagnostics): Backend['rolesQuery'] {
  new AttributeReader(element, diagnostics).rejectOthers();
  const scanned = scanSql(element.text);
  for (const problem of scanned.problems) diagnostics.error(element.locate(problem.offset), `RolesQuery: ${problem.message}`);
  let uids = 0;
  scanned.placeholders.forEach((placeholder, index) => {
    if (placeholder.kind === 'uid') uids++;
    else {
      diagnostics.error(
        element.locate(scanned.placeholderOffsets[index]!),
        `RolesQuery may use only $uid (the session's user id), not ${describePlaceholder(placeholder)}`,
      );
    }
  });
  if (scanned.statement !== 'read') diagnostics.error(element.at, 'RolesQuery must be a SELECT');
  else if (uids === 0) diagnostics.error(element.at, "RolesQuery finds the session's user by $uid: without it, it would answer for every user");
  else if (scanned.columns !== null && !scanned.columns.includes('aud')) {
    diagnostics.error(element.at, 'RolesQuery returns each role the user holds as a column named aud (give the column an alias)');
  }
  return { sql: scanned.sql };
}

/** Where the sessions' settings and queries are said, for the rules that tie them together. */
export interface SessionPlaces {
  refresh: SourceLocation | undefined;
  maxSessions: SourceLocation | undefined;
  authQuery: RawElement | undefined;
  rolesQuery: RawElement | undefined;
}

/** A refresh must admit only whom the backend admits now: sessions over an own AuthQuery need a RolesQuery. */
export function checkSessionQueries(backend: Backend, places: SessionPlaces, diagnostics: Diagnostics): void {
  const sessions = backend.refreshLifetime !== null;
  if (places.maxSessions && !sessions)
    diagnostics.error(places.maxSessions, 'max_sessions bounds sessions, which refresh_lifetime turns on: add refresh_lifetime');
  if (places.rolesQuery && !sessions) {
    diagnostics.error(places.rolesQuery.at, 'a RolesQuery is asked at each refresh of a session, which refresh_lifetime turns on: add refresh_lifetime');
  } else if (places.rolesQuery && !places.authQuery) {
    diagnostics.error(
      places.rolesQuery.at,
      "a RolesQuery belongs with an AuthQuery of the backend's own: on the default user tables, their triggers end the sessions of a user deleted, disabled or stripped of a role",
    );
  }
  if (sessions && places.refresh && places.authQuery && !places.rolesQuery && backend.authScheme === 'Bearer') {
    diagnostics.error(
      places.refresh,
      "refresh_lifetime with an AuthQuery of the backend's own needs a RolesQuery, the roles the user holds now (a row per role as aud, none when the user is gone; e.g. <RolesQuery>select role as aud from my_roles where user_id = $uid</RolesQuery>): every refresh asks it, so that no session outlives its user",
    );
  }
}
