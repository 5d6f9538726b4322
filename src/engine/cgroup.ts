// A cgroup of its own for each step attempt (Linux cgroup v2), where the system lets Factory make
// one: a folder under Factory's own cgroup that it may create and whose `cgroup.procs` it may write
// (root, or a subtree delegated to its user, such as a systemd unit with `Delegate=yes`). A process
// cannot leave its cgroup by its own means (`setsid`, `env -i`, a double fork), and every process
// it starts is born in it, so killing the cgroup stops everything the step started.
//
// The child is moved in right after it starts (Node cannot start it inside one). Where there is no
// such cgroup (cgroup v1 only, a cgroup owned by another user, macOS), `StepCgroup.create`
// answers undefined and the caller falls back to following descendants (descendants.ts).

import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, rmdirSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rmdir, stat } from 'node:fs/promises';

/** Each step cgroup's folder name starts with this; the rest is random. */
export const STEP_CGROUP_PREFIX = 'factory-step-';
/** How long a freeze may take before the members are killed one by one anyway (kernels before 5.14). */
const FREEZE_WAIT_MS = 1000;
const CHECK_MS = 50;

/**
 * The `0::` line of /proc/<pid>/cgroup (the process's cgroup v2 path, `/` for the root), or
 * undefined when there is none (cgroup v1 only).
 */
export function parseUnifiedCgroupPath(text: string): string | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith('0::'));
  return line === undefined ? undefined : line.slice(3);
}

/**
 * The folder holding the cgroup v2 path `path`, from /proc/self/mountinfo's text: the cgroup2
 * mount whose root contains it (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a hybrid system).
 * Undefined when no cgroup2 mount holds it.
 */
export function cgroupFolderOf(path: string, mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [mountFields, fileSystem] = line.split(' - ');
    if (!fileSystem?.startsWith('cgroup2 ')) continue;
    // Fields: id, parent id, major:minor, root, mount point, …; spaces in paths are written \040.
    const [root, mountPoint] = mountFields!.split(' ').slice(3, 5).map(unescapeMountPath);
    if (root === undefined || mountPoint === undefined) continue;
    const inside = root === '/' ? path : path === root ? '/' : path.startsWith(`${root}/`) ? path.slice(root.length) : undefined;
    if (inside !== undefined) return inside === '/' ? mountPoint : `${mountPoint}${inside}`;
  }
  return undefined;
}

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The folder of this process's own cgroup v2, or undefined (not Linux, cgroup v1 only). Never rejects. */
export async function findOwnCgroupFolder(procFolder = '/proc'): Promise<string | undefined> {
  const [cgroups, mountinfo] = await Promise.all(
    [`${procFolder}/self/cgroup`, `${procFolder}/self/mountinfo`].map((file) => readFile(file, 'utf8').catch(() => undefined)),
  );
  const path = cgroups === undefined ? undefined : parseUnifiedCgroupPath(cgroups);
  return path === undefined || mountinfo === undefined ? undefined : cgroupFolderOf(path, mountinfo);
}

/** The key of `parents` for this process's own cgroup. */
const OWN_CGROUP = '';
/** Where step cgroups are made, per parent asked for; undefined once making or filling one was refused. */
const parents = new Map<string, Promise<string | undefined>>();

/** Errors that mean "no cgroup here for us", not "this one step went wrong". */
function isRefusal(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return ['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'EOPNOTSUPP', 'ENOTSUP', 'EBUSY'].includes(code ?? '');
}

/** One step attempt's cgroup. */
export class StepCgroup {
  /** True when Factory could not leave it after a spawn: then it is killed member by member, Factory spared. */
  private holdsFactory = false;

  private constructor(readonly folder: string, private readonly parentFolder: string, private readonly parentKey: string) {}

  /**
   * Makes a new empty cgroup under this process's own, or under `parentFolder` (tests: a folder laid
   * out like cgroupfs). Undefined when the system does not let us; then every later call for the
   * same parent says so at once. Never rejects.
   */
  static async create(parentFolder?: string): Promise<StepCgroup | undefined> {
    const key = parentFolder ?? OWN_CGROUP;
    let parent = parents.get(key);
    if (!parent) parents.set(key, (parent = parentFolder !== undefined ? Promise.resolve(parentFolder) : findOwnCgroupFolder()));
    const folder = await parent;
    if (folder === undefined) return undefined;
    const stepFolder = `${folder}/${STEP_CGROUP_PREFIX}${randomBytes(8).toString('hex')}`;
    try {
      await mkdir(stepFolder);
    } catch (error) {
      if (isRefusal(error)) parents.set(key, Promise.resolve(undefined));
      return undefined;
    }
    return new StepCgroup(stepFolder, folder, key);
  }

  /**
   * Calls `start`, which spawns the step's process, with this process moved into the cgroup for
   * that moment, so the child is born in it (as is everything it starts): Node cannot move a
   * child in before it runs, and a child moved in after it started may have forked and exited by
   * then. JavaScript runs nothing else meanwhile, and only the main thread spawns, so no other
   * child is born there. This process moves back before `start`'s value (or error) is returned.
   *
   * `inside` is false when this process could not move in (then `start` ran outside, and later
   * `create` calls give up on cgroups). Should it fail to move back, the cgroup is never killed
   * as a whole (it would kill Factory) but member by member, and cgroups are given up.
   */
  startInside<T>(start: () => T): { value: T; inside: boolean } {
    try {
      writeExistingSync(`${this.folder}/cgroup.procs`, String(process.pid));
    } catch {
      parents.set(this.parentKey, Promise.resolve(undefined));
      return { value: start(), inside: false };
    }
    try {
      return { value: start(), inside: true };
    } finally {
      try {
        writeExistingSync(`${this.parentFolder}/cgroup.procs`, String(process.pid));
      } catch {
        this.holdsFactory = true;
        parents.set(this.parentKey, Promise.resolve(undefined));
      }
    }
  }

  /**
   * The step cgroup process `pid` is in (one a Factory made: its name starts with
   * STEP_CGROUP_PREFIX), or undefined (none, or no cgroup v2). For a restart, which finds a
   * crashed Factory's step by one of its processes. Never rejects.
   */
  static async holding(pid: number, procFolder = '/proc'): Promise<StepCgroup | undefined> {
    const [cgroups, mountinfo] = await Promise.all(
      [`${procFolder}/${pid}/cgroup`, `${procFolder}/self/mountinfo`].map((file) => readFile(file, 'utf8').catch(() => undefined)),
    );
    const path = cgroups === undefined ? undefined : parseUnifiedCgroupPath(cgroups);
    const folder = path === undefined || mountinfo === undefined ? undefined : cgroupFolderOf(path, mountinfo);
    const name = path?.split('/').at(-1) ?? '';
    if (folder === undefined || !name.startsWith(STEP_CGROUP_PREFIX)) return undefined;
    const parentFolder = folder.slice(0, folder.lastIndexOf('/'));
    return new StepCgroup(folder, parentFolder, parentFolder);
  }

  /** The pids of the processes in it now (zombies are not listed). Never rejects. */
  async members(): Promise<number[]> {
    const text = await readFile(`${this.folder}/cgroup.procs`, 'latin1').catch(() => '');
    return text.split('\n').filter((line) => line !== '').map(Number);
  }

  /**
   * Sends SIGKILL to every process in it at once (`cgroup.kill`, Linux 5.14+). On older kernels it
   * freezes the cgroup (so nothing in it can fork meanwhile), kills each member, and thaws it. Never rejects.
   */
  async kill(): Promise<void> {
    if (!this.holdsFactory) {
      try {
        await writeExisting(`${this.folder}/cgroup.kill`, '1');
        return;
      } catch {
        // No cgroup.kill: freeze, kill each, thaw.
      }
    }
    const frozen = await writeExisting(`${this.folder}/cgroup.freeze`, '1').then(() => true, () => false);
    if (frozen) {
      const deadline = performance.now() + FREEZE_WAIT_MS;
      while (performance.now() < deadline) {
        const events = await readFile(`${this.folder}/cgroup.events`, 'latin1').catch(() => '');
        if (/^frozen 1$/m.test(events)) break;
        await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
      }
    }
    for (const pid of await this.members()) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    if (frozen) await writeExisting(`${this.folder}/cgroup.freeze`, '0').catch(() => {});
  }

  /**
   * Removes the cgroup once it is empty, trying every CHECK_MS for at most `timeoutMs`; a cgroup
   * still in use after that is left (its processes are in it still, where a later look finds them).
   * Resolves true once removed. Never rejects.
   */
  async removeWhenEmpty(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    removeAtExit(this.folder, true);
    try {
      for (;;) {
        try {
          await rmdir(this.folder);
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
          if ((error as NodeJS.ErrnoException).code !== 'EBUSY' || performance.now() >= deadline) return false;
        }
        await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
      }
    } finally {
      removeAtExit(this.folder, false);
    }
  }

  /**
   * Removes the empty step cgroups under this process's own that are older than `minimumAgeMs`:
   * those a Factory that crashed (or exited while waiting for them to empty) left behind. A new
   * one is never touched: it is empty only for the moment before its child starts. Never rejects.
   */
  static async removeStale(minimumAgeMs: number, parentFolder?: string): Promise<void> {
    const folder = parentFolder ?? (await findOwnCgroupFolder());
    if (folder === undefined) return;
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names.filter((candidate) => candidate.startsWith(STEP_CGROUP_PREFIX))) {
      const made = await stat(`${folder}/${name}`).catch(() => undefined);
      if (made && Date.now() - made.mtimeMs >= minimumAgeMs) await rmdir(`${folder}/${name}`).catch(() => {});
    }
  }
}

/** Step cgroups waiting to empty: tried once more, synchronously, if this process exits first. */
const removalsPending = new Set<string>();
let exitHookInstalled = false;

function removeAtExit(folder: string, pending: boolean): void {
  if (!pending) {
    removalsPending.delete(folder);
    return;
  }
  if (!exitHookInstalled) process.once('exit', removePendingNow);
  exitHookInstalled = true;
  removalsPending.add(folder);
}

function removePendingNow(): void {
  for (const folder of removalsPending) {
    try {
      rmdirSync(folder);
    } catch {
      // Still in use: a later start's removeStale takes it.
    }
  }
}

/**
 * Writes `text` to a cgroupfs file that must exist: it is opened write-only, never created or
 * read (some of these files, `cgroup.kill`, cannot be read), so a missing one fails with ENOENT.
 */
function writeExistingSync(path: string, text: string): void {
  const descriptor = openSync(path, constants.O_WRONLY);
  try {
    writeSync(descriptor, text);
  } finally {
    closeSync(descriptor);
  }
}

/** writeExistingSync without blocking. */
async function writeExisting(path: string, text: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY);
  try {
    await handle.write(text);
  } finally {
    await handle.close();
  }
}
