import { SETTINGS } from '../../../runtime/config/settings.js';

/**
 * The files of a new project other than package.json, as text: what `xmlrest init` writes. Each is small and
 * says what its parts do; the resources use the default tables `xmlrest db init` makes (usr, usr_role).
 */

export type Scheme = 'Basic' | 'Bearer';

export interface Project {
  /** The backend's name, its folder under resources/ and its path's first part. */
  backend: string;
  scheme: Scheme;
}

/** The role the example resource asks for, and the one the printed `user add` grants. */
export const EXAMPLE_ROLE = 'user';

export function tsconfigJson(): string {
  const config = {
    compilerOptions: {
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      skipLibCheck: true,
      verbatimModuleSyntax: true,
      types: ['node'],
      noEmit: true,
    },
    include: ['generated', 'plugins'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function gitignore(): string {
  return ['node_modules/', '.xmlrest/', 'dist/', '.env', ''].join('\n');
}

/** Every setting npm start reads (runtime/config/settings.ts), each with a comment, DATABASE_URL first. */
export function envExample(): string {
  const lines = [
    '# The settings npm start reads, from the environment or from .env (copy this file to .env and uncomment what you',
    '# set; values already in the environment win). Each is shown with its default, or an example when it has none.',
    '# npm start needs DATABASE_URL; npm run dev without it starts a private MariaDB under .xmlrest/.',
    '',
  ];
  for (const setting of SETTINGS) {
    lines.push(`# ${setting.name}: ${setting.about}${setting.example ? ' (example)' : ''}`);
    // Every line commented, DATABASE_URL too: copied to .env as it is, it changes nothing (an example URL set
    // would send npm run dev to a database that is not there instead of its private one).
    lines.push(`# ${setting.name}=${setting.value}`);
  }
  lines.push(
    '',
    "# A Webhook's secret attribute names a variable of its own, holding its whsec_ secret; a backend.xml attribute",
    "# written ${NAME} (an Issuer's iss, jwks_uri or discovery, a Webhook's url) reads the variable NAME at start.",
    '',
  );
  return lines.join('\n');
}

export function backendXml({ scheme }: Project): string {
  const bearer = scheme === 'Bearer';
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- The backend: every resource file in this folder is served under /<folder>/v1.0/<file name>.
     auth_scheme says how callers prove who they are: ${
       bearer
         ? 'Bearer, a token from token.xml (POST) sent as\n     "Authorization: Bearer <token>"; token_lifetime is its life in seconds. npm start needs JWT_SECRET.'
         : 'Basic, a user name and password sent with every\n     request (curl -u name:password).'
     }
     Users and roles are the default tables (usr, usr_role) that "npx xmlrest db init" makes. -->
<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="${scheme}"${bearer ? ' token_lifetime="3600"' : ''}>
  <Desc>Our API.</Desc>
</Backend>
`;
}

export function meXml(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- GET .../v1.0/me: the caller's own row. auth names the role a caller needs ("npx xmlrest user add ... --role ${EXAMPLE_ROLE}"). -->
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="${EXAMPLE_ROLE}">
  <Desc>Who am I: the calling user's own record.</Desc>
  <Request method="GET">
    <!-- $uid is the authenticated caller's id: each caller reads only its own row. output="true": the rows are the answer. -->
    <Sql id="me" output="true">
      select user_id, user_name, created_on from usr where user_id = $uid
    </Sql>
  </Request>
</Resource>
`;
}

/** The token request of a Bearer backend (docs/internals/contract.md §4, shape B), over the passwords \`user add\` stores. */
export function tokenXml(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- POST .../v1.0/token with the form fields user and pass: {"token": "<jwt>"} for the user's first role.
     No auth attribute: anyone may ask; a wrong password gets 401, and failed attempts are limited. -->
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Desc>Issues a token.</Desc>
  <Request method="POST" status="201">
    <!-- The user's id, a role and the stored password hash (argon2id: SQL cannot compare it, so the query returns it). -->
    <Sql id="authQuery" output="false">
      select cast(u.user_id as char) as sub, r.role_name as aud, u.pass_word
      from usr_role r inner join usr u on r.user_id = u.user_id
      where u.user_name = $user
    </Sql>
    <!-- The built-in token generator checks the password against the hash, then signs the token with JWT_SECRET. -->
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
      <Arg name="password" value="$pass"/>
      <Arg name="hash" value="$[authQuery][0].pass_word"/>
      <Arg name="user" value="$user"/>
    </Execute>
  </Request>
</Resource>
`;
}

/** The example calls, for the README and the printed next steps: the user is alice, her password changeme. */
export function exampleCalls({ backend, scheme }: Project): string[] {
  const base = `http://127.0.0.1:3000/${backend}/v1.0`;
  if (scheme === 'Basic') return [`curl -u alice:changeme ${base}/me`];
  return [
    `TOKEN=$(curl -s -d user=alice -d pass=changeme ${base}/token | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')`,
    `curl -H "Authorization: Bearer $TOKEN" ${base}/me`,
  ];
}

export const ADD_USER = `npx xmlrest user add alice --password changeme --role ${EXAMPLE_ROLE}`;

export function readme(project: Project): string {
  const { backend, scheme } = project;
  return `# An xmlrest project

Resource files in, a REST API on MariaDB or MySQL out ([xmlrest](https://www.npmjs.com/package/xmlrest)).

## Files

- \`resources/${backend}/backend.xml\`: the backend \`${backend}\` (${scheme === 'Bearer' ? 'Bearer tokens' : 'HTTP Basic'}); each other file in its folder is a resource, served at \`/${backend}/v1.0/<file name>\`.
- \`resources/${backend}/me.xml\`: an example resource, the caller's own row of the user table.${
    scheme === 'Bearer' ? `\n- \`resources/${backend}/token.xml\`: the token request (POST a user name and password, get a token).` : ''
  }
- \`plugins/\` (when you write one): TypeScript functions a resource's \`Execute\` calls, type-checked with the rest.
- \`generated/\`: TypeScript modules made from the resources by \`npm run generate\`; commit them, never edit them.
- \`.env.example\`: every setting \`npm start\` reads; copy it to \`.env\` (not committed).
- \`.xmlrest/\`: the private database and build state of \`npm run dev\` (not committed).

## Commands

- \`npm run dev\`: generates and serves with live reload. Without \`DATABASE_URL\` it starts a private MariaDB under
  \`.xmlrest/\` and prints its \`DATABASE_URL\`; with it, it uses that database.
- \`npm run generate\`: regenerates \`generated/\` from \`resources/\` (against the database in \`DATABASE_URL\`).
- \`npm run build\` then \`npm start\`: the production server (settings from the environment or \`.env\`).
- \`npm test\`: \`generated/\` is current, and it type-checks.
- \`npx xmlrest db init\`: creates the user tables (\`usr\`, \`usr_role\`) and xmlrest's own in \`DATABASE_URL\`'s database.

## A resource of your own

Write \`resources/${backend}/<name>.xml\` (see \`me.xml\`): \`npm run dev\` serves it at \`/${backend}/v1.0/<name>\` as
soon as it is saved, and prints any error with its file and line. Commit \`resources/\`, \`generated/\` and
\`access.lock\` together.

## A first call

With \`DATABASE_URL\` set (the one \`npm run dev\` printed, or your database after \`npx xmlrest db init\`):

\`\`\`sh
${ADD_USER}
${exampleCalls(project).join('\n')}
\`\`\`
${scheme === 'Bearer' ? '\n`npm start` needs `JWT_SECRET` (at least 32 random bytes) to sign tokens: see `.env.example`.\n' : ''}`;
}
