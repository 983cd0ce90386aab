import type { Command } from 'commander';
import { program } from '../cli/xmlrest.js';
import { code, page, table } from './markdown.js';

/** docs/reference/cli.md: every command, subcommand, argument and option, read from the commander program scripts/cli/xmlrest.ts builds. */
export function cliPage(): string {
  const root = program(() => {});
  const sections: string[] = [];
  const walk = (command: Command, path: string[]) => {
    for (const sub of [...command.commands].sort((a, b) => (a.name() < b.name() ? -1 : 1))) {
      const names = [...path, sub.name()];
      if (sub.commands.length > 0) {
        sections.push(
          `## xmlrest ${names.join(' ')}\n\n${sub.description()}\n\nSubcommands: ${sub.commands
            .map((c) => code(c.name()))
            .sort()
            .join(', ')}.`,
        );
        walk(sub, names);
      } else sections.push(commandSection(sub, names));
    }
  };
  walk(root, []);
  const options = root.options.map((option) => [code(option.flags), option.description]);
  return page('The xmlrest command', 'the commander program of scripts/cli/xmlrest.ts', [
    '`npx xmlrest <command>` in a project (or `npm run xmlrest -- <command>` in this repository). Every command takes `-h, --help`. ' +
      'Exit codes: 0 done, 1 failed, 2 a wrong command line (explain: 0 allowed, 1 denied, 3 cannot tell). ' +
      'Database commands read DATABASE_URL from the environment or `.env`.',
    table(['option', 'what it does'], options),
    ...sections,
  ]);
}

function commandSection(command: Command, names: string[]): string {
  const args = command.registeredArguments.map((argument) => {
    const name = argument.variadic ? `${argument.name()}...` : argument.name();
    return argument.required ? `<${name}>` : `[${name}]`;
  });
  const parts = [
    `## xmlrest ${names.join(' ')}`,
    command.description(),
    code(['xmlrest', ...names, ...args, command.options.length > 0 ? '[options]' : ''].filter(Boolean).join(' ')),
  ];
  if (command.registeredArguments.length > 0)
    parts.push(
      table(
        ['argument', 'required', 'what it is'],
        command.registeredArguments.map((argument) => [code(argument.name()), argument.required ? 'yes' : 'no', argument.description]),
      ),
    );
  const options = command.options.filter((option) => !option.hidden);
  if (options.length > 0)
    parts.push(
      table(
        ['option', 'default', 'what it does'],
        options.map((option) => [
          code(option.flags),
          option.defaultValue === undefined ? '' : code(String(option.defaultValue)),
          option.description + (option.mandatory ? ' (required)' : ''),
        ]),
      ),
    );
  return parts.join('\n\n');
}
