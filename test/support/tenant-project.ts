import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A project folder whose generated/ holds one backend with a tenant, written by hand: until the generator reads
 * `<Tenant>` (issue 43, helper "gen"), this is what its index will say of such a backend. The commands read a
 * project's backends from generated/index.ts through tsx, so the module needs nothing but its object. The
 * backend is named `staff` by default: tokens the demo's built server issues on staff are then revoked by what
 * the commands do for this backend.
 */
export interface TenantProject {
  name?: string;
  column: string;
  userColumn?: string;
  type?: 'integer' | 'text';
  triggers?: boolean;
  /** A custom TenantQuery in place of the default tables' user column. */
  customQuery?: string;
  /** The same backend without a tenant: a project none of whose backends has one. */
  none?: boolean;
}

export function writeTenantProject(root: string, project: TenantProject): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(path.join(root, 'generated'), { recursive: true });
  const userColumn = project.userColumn ?? project.column;
  const tenant = {
    column: project.column,
    type: project.type ?? 'integer',
    userQuery: { sql: project.customQuery ?? `select ${userColumn} as tenant from usr where user_id = ?` },
    // As the generator writes it on the default tables: the column the console and `user tenant` set.
    ...(project.customQuery === undefined ? { userColumn } : {}),
    ...(project.triggers ? { triggers: true } : {}),
  };
  const backend = {
    name: project.name ?? 'staff',
    authScheme: 'Basic',
    authQuery: {
      sql: 'select r.user_id, r.role_name, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = ?',
      binds: ['user'],
      passwordColumn: 'pass_word',
    },
    defaultTables: project.customQuery === undefined,
    uidType: 'integer',
    tokenLifetime: 3600,
    clockSkew: 0,
    rehashPlaintext: false,
    credentialCacheSeconds: 60,
    issuer: project.name ?? 'staff',
    iatUnit: 's',
    consoleRole: 'xmlrest-operator',
    absentCredentialsStatus: 403,
    issuers: [],
    apiKeys: true,
    refreshLifetime: null,
    sessionLifetime: 2592000,
    ...(project.none ? {} : { tenant }),
    resources: [],
  };
  writeFileSync(
    path.join(root, 'generated/index.ts'),
    `export const generator = { version: '0.1.0', format: 1 };\nexport const backends = [${JSON.stringify(backend, null, 2)}];\n`,
  );
}

/** Runs `xmlrest ...args` in the project folder, on the database at `databaseUrl`. */
export function xmlrestIn(root: string, databaseUrl: string, args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.resolve('scripts/xmlrest.mjs'), ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}
