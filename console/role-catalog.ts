// The console's catalog of roles (xmlrest_role) as `xmlrest db init` makes it: apart from the store's statements
// on it, since the schema command needs these and nothing else.

/** The roles created on each backend's console (console/scope.ts): a role there belongs to the backend whose console created it. */
export const ROLE_CATALOG = `create table if not exists xmlrest_role (
  role_name varchar(64) character set utf8mb4 collate utf8mb4_nopad_bin not null primary key,
  backend varchar(64) not null default '',
  created_on timestamp not null default current_timestamp
) engine = InnoDB default charset = utf8mb4`;
/** A catalog made before roles belonged to a backend gets the column (`xmlrest db init`); its rows belong to none. */
export const ROLE_CATALOG_BACKEND = "alter table xmlrest_role add column backend varchar(64) not null default '' after role_name";
