import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Names every error that belongs to no test, just before vitest's own summary: a `beforeAll` or `afterAll`
 * that failed (its suite's tests are then counted as skipped, not failed), a test file that failed to load,
 * an unhandled rejection or exception. Such an error fails the run with every test passed or skipped, and
 * otherwise shows only as a line far up the log; here it is named with its file and suite.
 */
export default class OutsideErrorsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const lines: string[] = [];
    const describe = (error: SerializedError) => `${error.name ?? 'Error'}: ${String(error.message ?? '').split('\n')[0]}`;
    for (const module of testModules) {
      const file = module.relativeModuleId;
      for (const error of module.errors()) lines.push(`${file}: ${describe(error)}`);
      for (const suite of module.children.allSuites()) for (const error of suite.errors()) lines.push(`${file} > ${suite.fullName}: ${describe(error)}`);
    }
    for (const error of unhandledErrors) lines.push(`unhandled, outside any test: ${describe(error)}`);
    if (lines.length === 0) return;
    process.stdout.write(`\nErrors outside any test (${lines.length}), each failing the run:\n${lines.map((line) => `  - ${line}`).join('\n')}\n`);
  }
}
