import { REHASH_VARIABLE } from '../runtime/auth/passwords/credentials.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';

const { users: USERS, roles: ROLES, userId: ID, userName: NAME, password: PASSWORD, roleName: ROLE } = DEFAULT_USER_TABLES;

/**
 * The default user and role tables (docs/internals/seed.md §2.2, named in
 * runtime/auth/users/user-tables.ts). Names and passwords compare byte for byte
 * (utf8mb4_nopad_bin): a case-insensitive or PAD SPACE collation would let
 * `Secret` or `secret ` match the password `secret`.
 */
export const DEFAULT_TABLES = [
  `create table if not exists ${USERS} (
    ${ID} int unsigned not null auto_increment primary key,
    ${NAME} varchar(190) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    ${PASSWORD} varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    created_on timestamp not null default current_timestamp,
    unique key ${USERS}_${NAME} (${NAME})
  ) engine = InnoDB default charset = utf8mb4`,
  `create table if not exists ${ROLES} (
    id int unsigned not null auto_increment primary key,
    ${ROLE} varchar(64) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    ${ID} int unsigned not null,
    created_on timestamp not null default current_timestamp,
    expires_on timestamp null default null,
    unique key ${ROLES}_user_role (${ID}, ${ROLE}),
    key ${ROLES}_role (${ROLE}),
    key ${ROLES}_expires (expires_on),
    constraint ${ROLES}_user foreign key (${ID}) references ${USERS} (${ID}) on delete cascade
  ) engine = InnoDB default charset = utf8mb4`,
];

/**
 * Whoever changes the default user tables (the console of any backend, the
 * CLI, SQL by hand), every server hears of it within its revocation poll:
 * a role that is removed or renamed, a user that is deleted, and a password
 * that changes (a reset, or a lock: the console disables a user by
 * prefixing the stored value, console/store.ts) revoke every token that user
 * holds on every backend (`*`); a deleted user's API keys are revoked. What a login reads needs nothing of the
 * kind: every login runs the auth query, and a remembered password is
 * remembered for its stored value only (runtime/auth/passwords/credential-cache.ts).
 * Foreign-key cascades fire no triggers, so deleting a user has a trigger of
 * its own. The server replacing a plain-text password with its hash
 * (rehash_plaintext) changes no password: it says so in a session variable
 * naming the plain value it replaces (runtime/auth/passwords/credentials.ts), which the
 * trigger takes. A grant that ends (`expires_on`, runtime/auth/users/grants.ts) is
 * deleted when it ends, so its end is a revoke too, recorded in the console's
 * history (`*`: every console of the default tables shows it); a change of a
 * grant that only keeps or extends its end revokes nothing, one that brings
 * the end nearer (or makes a grant temporary) revokes as removing it would,
 * since tokens issued before it may outlive the new end.
 */
const REVOKED = (user: string) => `insert into xmlrest_revoked_user (backend, sub, revoked_before) values ('*', cast(${user} as char), now())
      on duplicate key update revoked_before = now();`;
/**
 * A user's API keys end with the user (its row deleted, or its id changed), whoever does it: revoked, not
 * refused for as long as no user holds the id, so that none comes back to life when the id is used again.
 */
const KEYS_REVOKED = (user: string) => `update xmlrest_api_key set revoked_on = now() where user_id = cast(${user} as char) and revoked_on is null;`;
/** The history line of a grant's end: the end in UTC whatever the session's zone, by the user's name. */
const GRANT_ENDED = `insert into xmlrest_console_audit (backend, actor, action, target, detail, address) values ('*', 'xmlrest', 'grant ended',
        coalesce((select u.${NAME} from ${USERS} u where u.${ID} = old.${ID}), cast(old.${ID} as char)),
        concat(old.${ROLE}, ' until ', date_format(utc_timestamp() - interval (unix_timestamp() - unix_timestamp(old.expires_on)) second, '%Y-%m-%dT%H:%i:%sZ')), '');`;
const REHASHED = `${REHASH_VARIABLE} is not null and ${REHASH_VARIABLE} = sha2(old.${PASSWORD}, 256) and new.${PASSWORD} like '$argon2%'`;
export const DEFAULT_TABLE_TRIGGERS: Record<string, string> = {
  [`xmlrest_${ROLES}_update`]: `after update on ${ROLES} for each row begin
    if new.${ID} <> old.${ID} or new.${ROLE} <> old.${ROLE} or (new.expires_on is not null and (old.expires_on is null or new.expires_on < old.expires_on)) then
      ${REVOKED(`old.${ID}`)}
    end if;
  end`,
  [`xmlrest_${ROLES}_delete`]: `after delete on ${ROLES} for each row begin
    ${REVOKED(`old.${ID}`)}
    if old.expires_on is not null and old.expires_on <= now() then
      ${GRANT_ENDED}
    end if;
  end`,
  [`xmlrest_${USERS}_update`]: `after update on ${USERS} for each row begin
    if new.${ID} <> old.${ID} or (new.${PASSWORD} <> old.${PASSWORD} and not (${REHASHED})) then
      ${REVOKED(`old.${ID}`)}
    end if;
    if new.${ID} <> old.${ID} then
      ${KEYS_REVOKED(`old.${ID}`)}
    end if;
    set ${REHASH_VARIABLE} = null;
  end`,
  [`xmlrest_${USERS}_delete`]: `after delete on ${USERS} for each row begin
    ${REVOKED(`old.${ID}`)}
    ${KEYS_REVOKED(`old.${ID}`)}
  end`,
};

/** Triggers of earlier versions, dropped by `xmlrest db init` (granting a role told servers to forget remembered logins). */
export const RETIRED_TRIGGERS = [`xmlrest_${ROLES}_insert`];
