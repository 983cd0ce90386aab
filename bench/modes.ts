import { PAGES_BY_ID } from './report.js';

/**
 * Which scenarios a run measures. `--profile` takes one scenario, `--ab` a few: a name given exactly is that
 * scenario alone (`public GET`, not also `public GET, traced`), else every name holding the text, as `--only`.
 */
const AB_DEFAULT = ['public GET', PAGES_BY_ID, 'Bearer GET ($uid)'];

export function modeScenarios<T extends { name: string }>(all: T[], flags: { only?: string; profile?: string; ab?: string }): T[] {
  const named = (text: string) => {
    const exact = all.filter((scenario) => scenario.name === text);
    return exact.length > 0 ? exact : all.filter((scenario) => scenario.name.includes(text));
  };
  if (flags.profile !== undefined) {
    const found = named(flags.profile);
    if (found.length === 0) throw new Error(`--profile: no scenario is named "${flags.profile}"; names: ${all.map((s) => s.name).join('; ')}`);
    return found.slice(0, 1);
  }
  if (flags.ab !== undefined) {
    const found = flags.only === undefined ? all.filter((scenario) => AB_DEFAULT.includes(scenario.name)) : named(flags.only);
    if (found.length === 0) throw new Error(`--ab: no scenario is named "${flags.only}"`);
    return found;
  }
  return flags.only === undefined ? all : all.filter((scenario) => scenario.name.includes(flags.only!));
}

/**
 * The server of a scenario a mode works on: `--server`, else the first of the scenario's servers that the generated
 * server's build serves (`page-first` for the pages, `untraced` for the traced GET, `generated` for most).
 */
export function modeServer<S extends string>(scenario: { name: string; servers: S[] }, processOf: (server: S) => string, wanted?: string): S {
  if (wanted !== undefined) {
    const found = scenario.servers.find((server) => server === wanted);
    if (found === undefined) throw new Error(`--server: "${scenario.name}" has no server ${wanted}; it has ${scenario.servers.join(', ')}`);
    return found;
  }
  // `untraced` is the generated build too, in a process of its own (the scenarios that time it against a variant).
  const found = scenario.servers.find((server) => ['generated', 'untraced'].includes(processOf(server)));
  if (found === undefined) throw new Error(`"${scenario.name}" has no server of the generated server's process: name one with --server`);
  return found;
}
