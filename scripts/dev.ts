import path from 'node:path';
import { parseArgs } from 'node:util';
import { serveDev } from './dev-server.js';

// `npm run dev` in this repository: scripts/dev-server.ts serves the project at --root (default: here).
const { values } = parseArgs({ options: { root: { type: 'string' } } });
await serveDev(path.resolve(values.root ?? '.'));
