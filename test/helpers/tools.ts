// System tools that some tests use as independent checks (zbarimg, rsvg-convert, Chromium), looked
// up on PATH. On a machine without one, the tests that need it are skipped, with a line saying what
// to install: `skipped: needs zbarimg (apt-get install zbar-tools)`, which test/run.mjs repeats.
// With CI=true a missing tool fails those tests instead: CI installs every tool (.ci/run), and a
// tool that went missing there must not turn into silently skipped tests.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { suite, type Test } from 'uvu';

export interface Tool {
  /** The command looked up on PATH and named in messages; a path (with a `/`) is checked as it is. */
  command: string;
  /** Other names the same tool has on some systems, tried in turn (`chromium-browser`). */
  alternatives?: string[];
  /** The Debian package that installs it. */
  package: string;
}

/** True when the environment says this is CI (`CI=true`, or `CI=1`). */
export function inCI(): boolean {
  return /^(true|1)$/i.test(process.env.CI ?? '');
}

/** The path of the first of the tool's names that is an executable file on PATH; undefined when none is. */
export function findTool(tool: Tool, path = process.env.PATH ?? ''): string | undefined {
  for (const name of [tool.command, ...(tool.alternatives ?? [])]) {
    const candidates = name.includes('/') ? [name] : path.split(delimiter).filter(Boolean).map((folder) => join(folder, name));
    const found = candidates.find(isExecutableFile);
    if (found) return found;
  }
  return undefined;
}

/** What a missing tool's tests say: `needs zbarimg (apt-get install zbar-tools)`. */
export function describeNeed(tool: Tool): string {
  return `needs ${tool.command} (apt-get install ${tool.package})`;
}

/**
 * Whether the tests that need `tool` should run: true when it is on PATH, and always under CI
 * (where they must fail when it is missing). Otherwise prints `skipped: needs <command> (apt-get
 * install <package>)` and returns false.
 */
export function needTool(tool: Tool): boolean {
  if (findTool(tool) || inCI()) return true;
  console.log(`skipped: ${describeNeed(tool)}`);
  return false;
}

/**
 * A uvu suite whose tests all need `tools`. With every tool on PATH it is a plain suite. When one
 * is missing, its hooks never run and each test is, outside CI, skipped (counted in uvu's
 * `Skipped:`), and under CI=true failed with the tool's install line.
 */
export function suiteNeeding<State = Record<string, any>>(name: string, tools: Tool[], state?: State): Test<State> {
  const real = suite<State>(name, state);
  const missing = tools.filter((tool) => !findTool(tool));
  if (missing.length === 0) return real;
  const runnable = missing.map(needTool).every(Boolean); // prints the skip lines; true only in CI
  const message = `missing ${missing.map((tool) => `\`${tool.command}\``).join(' and ')}: ${missing.map(describeNeed).join(', ')}`;
  const register = runnable
    ? (testName: string): void => real(testName, () => {
      throw new Error(`${message}; under CI=true a missing tool fails the tests that need it`);
    })
    : (testName: string): void => real.skip(testName);
  const ignore = Object.assign(() => {}, { each: () => {} });
  return Object.assign((testName: string) => register(testName), {
    only: (testName: string) => register(testName),
    skip: (testName?: string) => real.skip(testName),
    before: ignore,
    after: ignore,
    run: () => real.run(),
  });
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
