// Says, in words a user can act on, why a process could not start: a missing working folder, a
// missing command, a script whose interpreter is missing, or one that is not executable.

import { statSync } from 'node:fs';
import { errorMessage, quote } from '../core/errors';

/** A message a user can act on, for a process that could not start. */
export function describeSpawnError(error: unknown, command: string, cwd: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    if (!isFolder(cwd)) return `working folder not found: ${quote(cwd)}`;
    if (command.includes('/') && isFile(command)) return `cannot run ${quote(command)}: its interpreter (the #! line) was not found`;
    return `command not found: ${quote(command)}`;
  }
  if (code === 'EACCES') {
    if (!isFolder(cwd)) return `working folder not accessible: ${quote(cwd)}`;
    return `permission denied: ${quote(command)} is not executable`;
  }
  return `could not start ${quote(command)}: ${errorMessage(error)}`;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
