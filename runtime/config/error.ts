/** Every problem of a configuration, each naming its variable and what to do; thrown before any connection is tried. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}
