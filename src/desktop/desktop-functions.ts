// The desktop-only methods of the API (spec "Settings and desktop functions"): the folder picker,
// opening links, folders and editors, and remote pairing. Electron and the OS come in as ports, so
// the checks run in tests without the binary; main.ts passes shell, dialog, spawn and a PATH search.
// Arguments arrive from the renderer and are checked here before anything opens.

import { isAbsolute } from 'node:path';
import type { DesktopFunctions } from '../api';
import type { RemotePairing } from '../core/api';
import { ValidationError, quote } from '../core/errors';

/** What the desktop functions use of Electron and the OS. */
export interface DesktopPorts {
  shell: {
    openExternal(url: string): Promise<void>;
    /** Resolves with '' on success, else with an error message (Electron's shell.openPath). */
    openPath(path: string): Promise<string>;
  };
  dialog: {
    showOpenDialog(options: { title?: string; properties: ('openDirectory' | 'createDirectory')[] }): Promise<{ canceled: boolean; filePaths: string[] }>;
  };
  /** node:child_process spawn, or a fake. Must not be given `shell: true`. */
  spawn(command: string, args: string[], options: { shell: false; detached: true; stdio: 'ignore' }): { unref(): void; once?(event: 'error', listener: (error: Error) => void): unknown };
  /** The absolute path of a command found on PATH, or undefined. */
  which(command: string): Promise<string | undefined> | string | undefined;
}

/** What the desktop functions use of remote access (src/http/remote.ts). */
interface RemotePorts {
  pairing(): RemotePairing;
  resetToken(): Promise<void>;
}

/** The editors openInEditor tries, in order. */
const editorCommands = ['code', 'cursor'] as const;

/** Refuses anything but an http: or https: URL, naming the scheme it got. */
function checkWebUrl(url: unknown): string {
  if (typeof url !== 'string' || url.trim() === '') throw new ValidationError('The link must be a non-empty text');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError(`The link ${quote(url)} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ValidationError(`Only http and https links can be opened, not the scheme ${quote(parsed.protocol.replace(/:$/, ''))}`);
  }
  return parsed.href;
}

/** Refuses anything but an absolute path string without NUL characters. */
function checkAbsolutePath(path: unknown): string {
  if (typeof path !== 'string' || path === '') throw new ValidationError('The path must be a non-empty text');
  if (path.includes('\0')) throw new ValidationError('The path must not contain NUL characters');
  if (!isAbsolute(path)) throw new ValidationError(`The path ${quote(path)} is not an absolute path`);
  return path;
}

/** The DesktopFunctions of the desktop app, over the given ports. */
export function createDesktopFunctions(ports: DesktopPorts, remote: RemotePorts): DesktopFunctions {
  async function openPath(path: string): Promise<void> {
    const checked = checkAbsolutePath(path);
    const problem = await ports.shell.openPath(checked);
    if (problem) throw new Error(`Could not open ${quote(checked)}: ${problem}`);
  }

  return {
    async pickDirectory() {
      const result = await ports.dialog.showOpenDialog({ title: 'Choose a folder', properties: ['openDirectory', 'createDirectory'] });
      if (result.canceled || result.filePaths.length === 0) return null;
      return result.filePaths[0] ?? null;
    },

    async openExternal(url) {
      await ports.shell.openExternal(checkWebUrl(url));
    },

    openPath,

    // The first editor on PATH gets the path as its only argument, without a shell, so no
    // character of the path is ever interpreted; it runs on its own after Factory quits.
    async openInEditor(path) {
      const checked = checkAbsolutePath(path);
      for (const command of editorCommands) {
        const found = await ports.which(command);
        if (!found) continue;
        const child = ports.spawn(found, [checked], { shell: false, detached: true, stdio: 'ignore' });
        child.once?.('error', (error) => console.warn(`${command} failed to start: ${error.message}`));
        child.unref();
        return;
      }
      await openPath(checked);
    },

    async remotePairing() {
      return remote.pairing();
    },

    async resetRemoteToken() {
      await remote.resetToken();
    },
  };
}

/**
 * Finds a command on PATH like `which`: the first `<dir>/<command>` that is an executable file.
 * `isExecutable` is injected (fs.access with X_OK in main.ts).
 */
export async function findOnPath(command: string, pathVariable: string | undefined, isExecutable: (path: string) => Promise<boolean>, separator = ':'): Promise<string | undefined> {
  for (const folder of (pathVariable ?? '').split(separator)) {
    if (!folder || !isAbsolute(folder)) continue;
    const candidate = `${folder.replace(/\/+$/, '')}/${command}`;
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}
