// Atomic file replacement, after npm/write-file-atomic plus a folder fsync (DESIGN §5): a reader
// (or a restart after a crash) sees either the old content or the new, never a mix or a truncation.

import * as nodeFileSystem from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomHex } from '../core/ids';

/** The few file operations an atomic write needs; `node:fs/promises` fits it. Tests inject faults here. */
export interface AtomicFileSystem {
  open(path: string, flags: string, mode?: number): Promise<AtomicFileHandle>;
  rename(oldPath: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  stat(path: string): Promise<{ mode: number }>;
}

/** An open file: the subset of node's FileHandle used here. */
export interface AtomicFileHandle {
  /** Writes all of `data` from the current position. */
  writeFile(data: string | Uint8Array): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

interface AtomicWriteOptions {
  /**
   * Permission bits of the new file, such as 0o600 for secrets; the process umask still applies.
   * The temporary file is created with them, so the content never exists with looser permissions.
   * Default: the mode of the file being replaced, or 0o666 (less the umask) for a new file.
   */
  mode?: number;
  fs?: AtomicFileSystem;
}

const defaultFileSystem: AtomicFileSystem = nodeFileSystem;

// `.<basename>.<pid>.<8 hex digits>.tmp`, beside the target.
const tempFilePattern = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

// Filesystems that cannot fsync a folder say so with one of these; the rename is then as durable
// as that filesystem makes it.
const folderSyncUnsupported = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR']);

/**
 * Replaces the file at `path` with `data`: writes a temporary file in the same folder, fsyncs and
 * closes it, renames it over `path`, then fsyncs the folder so the rename survives a power loss.
 * Resolves once the new content is durable. On any failure the temporary file is removed, `path`
 * keeps its old content (or stays absent) and the promise rejects with the original error.
 * The folder must exist. Writes to one path are not queued here: `FileWriter` (writer.ts) is the
 * one queue per path, and the only caller.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const fileSystem = options.fs ?? defaultFileSystem;
  const folder = dirname(path);
  const tempPath = join(folder, `.${basename(path)}.${process.pid}.${randomHex(4)}.tmp`);
  const mode = options.mode ?? (await currentMode(fileSystem, path));
  let handle: AtomicFileHandle | undefined;
  let renamed = false;
  try {
    // 'wx': a fresh file created with `mode` from the start, never one that already existed.
    handle = await fileSystem.open(tempPath, 'wx', mode);
    await handle.writeFile(data);
    await handle.sync();
    const closing = handle;
    handle = undefined;
    await closing.close();
    await fileSystem.rename(tempPath, path);
    renamed = true;
    await syncFolder(folder, fileSystem);
  } finally {
    if (handle) await handle.close().catch(() => undefined);
    if (!renamed) await fileSystem.unlink(tempPath).catch(() => undefined);
  }
}

/** The permission bits of the file being replaced, or undefined when there is none. */
async function currentMode(fileSystem: AtomicFileSystem, path: string): Promise<number | undefined> {
  try {
    return (await fileSystem.stat(path)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Makes the entries of `folder` (a rename, a new subfolder) durable. Windows cannot open a folder
 * for this; NTFS journals such changes.
 */
export async function syncFolder(folder: string, fileSystem: AtomicFileSystem = defaultFileSystem): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await fileSystem.open(folder, 'r');
  try {
    await handle.sync();
  } catch (error) {
    if (!folderSyncUnsupported.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Deletes the temporary files that `writeFileAtomic` left in `folder` (not its subfolders) when a
 * process died mid-write, and returns how many it deleted. Temporary files of processes still
 * running, this one included, are left alone: their writes may be in flight. A missing folder
 * counts as clean.
 */
export async function removeStaleTempFiles(folder: string): Promise<number> {
  let names: string[];
  try {
    names = await nodeFileSystem.readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let removed = 0;
  for (const name of names) {
    const match = tempFilePattern.exec(name);
    if (!match || isProcessRunning(Number(match[1]))) continue;
    try {
      await nodeFileSystem.unlink(join(folder, name));
      removed += 1;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}

function isProcessRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
