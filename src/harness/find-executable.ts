// Finds an agent CLI on disk: the first executable of a name on PATH, then in the folders where
// the CLIs' installers usually put them (an app started from a desktop often lacks the user's PATH).

import { access, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** The folders where the agent CLIs' installers usually put them, for a home folder. */
export function defaultSearchFolders(home: string = homedir()): string[] {
  return [
    join(home, '.local/bin'), join(home, '.npm-global/bin'), '/usr/local/bin', '/opt/homebrew/bin',
    join(home, '.bun/bin'), join(home, '.cargo/bin'), join(home, '.opencode/bin'), join(home, '.claude/local'),
    join(home, '.amp/bin'), join(home, '.volta/bin'), join(home, 'bin'),
  ];
}

/**
 * The first executable file named `command` in the PATH folders, then in `searchFolders` (only
 * absolute folders; a relative PATH entry such as `.` is skipped). A command containing `/` is
 * taken as a path. Undefined when none is found.
 */
export async function findExecutable(command: string, path: string, searchFolders: readonly string[]): Promise<string | undefined> {
  if (command.includes('/')) {
    const candidate = resolve(command);
    return (await isExecutableFile(candidate)) ? candidate : undefined;
  }
  const folders = new Set([...path.split(delimiter), ...searchFolders].filter((folder) => folder && isAbsolute(folder)));
  for (const folder of folders) {
    const candidate = join(folder, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
