import { SETTINGS } from '../../runtime/config/settings.js';
import { byText, code, page, table } from './markdown.js';

/** docs/reference/settings.md: every environment setting `npm start` reads, from runtime/config/settings.ts (the one list). */
export function settingsPage(): string {
  const rows = [...SETTINGS]
    .sort(byText((setting) => setting.name))
    .map((setting) => [
      code(setting.name),
      setting.example ? '(none)' : code(setting.value) || '(empty)',
      setting.example ? code(setting.value) : '',
      setting.about + (setting.readBy === 'opentelemetry' ? " (read by OpenTelemetry's SDK)" : ''),
    ]);
  return page('Settings', 'runtime/config/settings.ts', [
    "The environment variables `npm start` (and `xmlrest start`) reads, from the environment or a `.env` file in the project's folder. " +
      'A setting with no default is required where it is needed (DATABASE_URL always, JWT_SECRET for Bearer backends and paged lists) or off when unset. ' +
      "Not listed, as their names are the project's own: the variable each Webhook's `secret` names, and each `${NAME}` a backend.xml attribute names.",
    table(['setting', 'default', 'example', 'what it does'], rows),
  ]);
}
