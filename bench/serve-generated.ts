/** The generated server, as `npm start` runs it, over the benchmark's resources (bench/generated). */
import { createApp, createLogger, listen, openDatabase } from '../runtime/index.js';
// @ts-ignore -- generated at benchmark time into bench/generated (git-ignored)
import { backends } from './generated/index.js';

const app = createApp({
  backends,
  database: openDatabase(process.env.DATABASE_URL ?? ''),
  jwtSecret: process.env.JWT_SECRET,
  logger: createLogger('warn'),
});
await listen(app, Number(process.env.PORT));
process.stdout.write('ready\n');
