// The sandbox runner (issue 25, PROVIDERS.md §11): a step's command wrapped in bubblewrap (`bwrap`,
// the distribution's package), so that what an issue's text steers an agent to do stays inside
// what the step needs. Inside, the step sees:
// - the system's programs and libraries, read-only (/usr, /bin, /lib…, and only the parts of /etc
//   that programs need to run and reach the network: not /etc/shadow, /etc/ssh, /etc/ssl/private);
// - its workspace, read-write at the same path, with git's metadata pinned (gitMounts below);
// - a private /tmp and an empty home folder (HOME) holding only the folders its harness declares
//   (HarnessDefinition.sandboxPaths: ~/.claude, ~/.codex…), so not ~/.ssh, ~/.aws, ~/.config/gh;
// - nothing of Factory's data folder or other runs' workspaces (nothing is mounted unless listed);
// - no network at all with `network: false` (its own network namespace: loopback only).
// Its processes live in their own PID, IPC and UTS namespaces and session, hold no capabilities,
// and die with bwrap (`--die-with-parent`). There is never a fall-back to running unsandboxed: a
// missing bwrap, or a kernel that refuses user namespaces, is an error that names the package.
//
// The environment is not put on bwrap's command line (--setenv): it passes through bwrap's own
// environment, so no secret appears in any process's arguments. Only HOME is set with --setenv.

import { spawn } from 'node:child_process';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Runner } from '../core/api';
import { FactoryError, quote } from '../core/errors';

/** How to get bwrap: the package is named in every error about it. */
const bubblewrapInstall = 'apt-get install bubblewrap';

/** The sandbox cannot be made on this machine: the message says why and what to install or change. */
export class SandboxUnavailableError extends FactoryError {
  override name = 'SandboxUnavailableError';
}

/** Folders of the system mounted read-only when they exist (symlinks, as on merged-/usr systems, are recreated as symlinks). */
const systemPaths: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The parts of /etc a step may read: name resolution, users and groups (for `id`, git, ssh), TLS
 * certificates, time zone, the dynamic linker's cache, Debian's alternatives (/usr/bin/awk points
 * there), git's and the shell's system-wide settings. Not /etc/shadow, /etc/ssh (host keys),
 * /etc/ssl/private, /etc/sudoers, nor anything else.
 */
const etcPaths: readonly string[] = [
  '/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/nsswitch.conf', '/etc/gai.conf', '/etc/services', '/etc/protocols',
  '/etc/passwd', '/etc/group', '/etc/ssl/certs', '/etc/ssl/openssl.cnf', '/etc/ca-certificates', '/etc/ca-certificates.conf',
  '/etc/pki/tls/certs', '/etc/pki/ca-trust', '/etc/localtime', '/etc/timezone', '/etc/ld.so.cache', '/etc/ld.so.conf',
  '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/gitconfig', '/etc/os-release', '/etc/mime.types', '/etc/profile', '/etc/bash.bashrc',
];

/** What a path on this machine is, as the layout needs to know. */
type PathKind = { kind: 'folder' } | { kind: 'file' } | { kind: 'symlink'; target: string } | undefined;

/** The folders git needs inside the sandbox, beside the workspace (see gitMounts). */
interface GitMounts {
  /** Mounted read-only first. */
  readOnly: string[];
  /** Then these, read-write, on top. */
  writable: string[];
  /** Then these, read-only again, on top of everything (the workspace included). */
  pinned: string[];
}

/** Everything the argument list is made from; sandboxArguments is a pure function of it. */
interface SandboxLayout {
  network: boolean;
  workspace: string;
  /** The home folder inside: an empty private folder at this path (HOME). */
  home: string;
  /** The system paths that exist here, with what they are. */
  system: { path: string; what: Exclude<PathKind, undefined> }[];
  /** Read-write, mounted when they exist (the harness's declared folders). */
  writable: string[];
  /** Read-only, mounted when they exist (the CLI's install folder). */
  readOnly: string[];
  git: GitMounts;
  command: string;
  args: readonly string[];
}

/**
 * The `bwrap` arguments for a layout (everything after `bwrap`). Mounts go in this order, each later
 * one covering earlier ones: the system, /proc, /dev, a private /tmp and home, the read-only
 * extras, the harness folders, git's common folder, the workspace, git's pinned files.
 */
export function sandboxArguments(layout: SandboxLayout): string[] {
  const args: string[] = [];
  for (const { path, what } of layout.system) {
    if (what.kind === 'symlink') args.push('--symlink', what.target, path);
    else args.push('--ro-bind', path, path);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', layout.home);
  for (const path of layout.readOnly) args.push('--ro-bind-try', path, path);
  for (const path of layout.writable) args.push('--bind-try', path, path);
  for (const path of layout.git.readOnly) args.push('--ro-bind-try', path, path);
  for (const path of layout.git.writable) args.push('--bind-try', path, path);
  args.push('--bind', layout.workspace, layout.workspace);
  for (const path of layout.git.pinned) args.push('--ro-bind-try', path, path);
  args.push('--chdir', layout.workspace);
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!layout.network) args.push('--unshare-net');
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--setenv', 'HOME', layout.home);
  args.push('--', layout.command, ...layout.args);
  return args;
}

export interface SandboxCommandOptions {
  /** The step's workspace (absolute); read-write at the same path. */
  workspace: string;
  /** The harness's declared folders (`~/.claude`); `~/` is the home folder. Read-write. */
  harnessPaths?: readonly string[];
  /** Folders the command needs to read (the CLI's install folder when it is outside /usr). */
  readOnlyPaths?: readonly string[];
  /** The step's complete environment (secrets included): it reaches the command through bwrap's environment. */
  env: Record<string, string>;
  command: string;
  args: readonly string[];
  /** The home folder whose declared folders are mounted; default the user's. */
  home?: string;
  /** Where bwrap is looked for; default: the PATH of `env`, then /usr/bin and /bin. */
  bwrapPath?: string;
}

/** What to start in place of the step's command: bwrap with its arguments, and the environment for it. */
interface SandboxedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Wraps `options.command` for a sandbox runner: resolves with the bwrap command line and the
 * environment to start it with (HOME set to the private home). Rejects with
 * SandboxUnavailableError when bwrap is missing or cannot make its namespaces here (checked once per
 * bwrap path), never falling back to running without the sandbox.
 */
export async function sandboxCommand(runner: Pick<Runner, 'kind' | 'network'>, options: SandboxCommandOptions): Promise<SandboxedCommand> {
  if (runner.kind !== 'sandbox') throw new RangeError(`sandboxCommand takes a sandbox runner, not one of kind ${quote(runner.kind)}`);
  if (!isAbsolute(options.workspace)) throw new RangeError(`The workspace must be an absolute path, not ${quote(options.workspace)}`);
  const bwrap = await checkBubblewrap(options.bwrapPath ?? (await findBubblewrap(options.env.PATH)));
  const home = options.home ?? homedir();
  const layout: SandboxLayout = {
    network: runner.network !== false,
    workspace: resolve(options.workspace),
    home,
    system: await inspectAll([...systemPaths, ...etcPaths]),
    writable: (options.harnessPaths ?? []).map((path) => expandHome(path, home)),
    readOnly: [...(options.readOnlyPaths ?? [])],
    git: await gitMounts(resolve(options.workspace)),
    command: options.command,
    args: options.args,
  };
  return { command: bwrap, args: sandboxArguments(layout), env: { ...options.env, HOME: home } };
}

/** `~/x` → `<home>/x`; `~` → home; other paths as they are. Relative paths are refused (RangeError). */
function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  if (!isAbsolute(path)) throw new RangeError(`A sandbox path must be absolute or start with ~/, not ${quote(path)}`);
  return path;
}

/**
 * What git needs beside the workspace, so that a step can commit on its branch but cannot make
 * Factory run its code later (Factory runs git in the workspace outside the sandbox: kept work,
 * pull requests). A worktree (`.git` is a file): the repository's common folder read-only (its
 * config and hooks), its objects, refs and logs and the worktree's own folder read-write, and the
 * files that say where the repository is (`.git`, `commondir`, `gitdir`) pinned read-only, so they
 * cannot be pointed at a folder with other hooks. A repository of its own (`.git` is a folder, a
 * project without worktrees): `.git` read-only, so commits fail inside the sandbox and Factory's
 * kept-work rules commit what is left. No git: nothing.
 */
async function gitMounts(workspace: string): Promise<GitMounts> {
  const dotGit = join(workspace, '.git');
  const what = await inspect(dotGit);
  if (what?.kind === 'folder') return { readOnly: [], writable: [], pinned: [dotGit] };
  if (what?.kind !== 'file') return { readOnly: [], writable: [], pinned: [] };
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
  if (!pointer) return { readOnly: [], writable: [], pinned: [dotGit] };
  const adminFolder = resolve(workspace, pointer[1]!);
  const common = (await readFile(join(adminFolder, 'commondir'), 'utf8').catch(() => '')).trim();
  const commonFolder = common ? resolve(adminFolder, common) : dirname(dirname(adminFolder));
  return {
    readOnly: [commonFolder],
    writable: ['objects', 'refs', 'logs'].map((name) => join(commonFolder, name)).concat(adminFolder),
    pinned: [dotGit, join(adminFolder, 'commondir'), join(adminFolder, 'gitdir')],
  };
}

async function inspect(path: string): Promise<PathKind> {
  try {
    const info = await lstat(path);
    if (info.isSymbolicLink()) return { kind: 'symlink', target: await readlink(path) };
    if (info.isDirectory()) return { kind: 'folder' };
    return { kind: 'file' };
  } catch {
    return undefined;
  }
}

async function inspectAll(paths: readonly string[]): Promise<SandboxLayout['system']> {
  const found = await Promise.all(paths.map(async (path) => ({ path, what: await inspect(path) })));
  // /etc entries that are symlinks (resolv.conf → /run/…) are mounted as what they point to.
  return found.flatMap(({ path, what }) => {
    if (!what) return [];
    if (what.kind === 'symlink' && path.startsWith('/etc/')) return [{ path, what: { kind: 'file' as const } }];
    return [{ path, what }];
  });
}

/** The first `bwrap` on `path`, then in `usualFolders`; SandboxUnavailableError when there is none. */
export async function findBubblewrap(path: string | undefined, usualFolders: readonly string[] = ['/usr/bin', '/bin']): Promise<string> {
  const folders = [...(path ?? '').split(':').filter((folder) => isAbsolute(folder)), ...usualFolders];
  for (const folder of folders) {
    const candidate = join(folder, 'bwrap');
    if ((await inspect(candidate)) !== undefined) return candidate;
  }
  throw new SandboxUnavailableError(`The sandbox needs bubblewrap, and \`bwrap\` was not found: install it with \`${bubblewrapInstall}\` (Debian, Ubuntu), \`dnf install bubblewrap\` (Fedora) or \`pacman -S bubblewrap\` (Arch)`);
}

const workingBubblewraps = new Set<string>();

/**
 * Resolves with `bwrap` once it has made a sandbox here (`bwrap --ro-bind / / --unshare-pid true`,
 * remembered once it worked); rejects with SandboxUnavailableError quoting bwrap's own words
 * otherwise, such as a kernel that does not let users make namespaces.
 */
export async function checkBubblewrap(bwrap: string): Promise<string> {
  if (workingBubblewraps.has(bwrap)) return bwrap;
  const outcome = await new Promise<{ code: number | null; error: string }>((done) => {
    let error = '';
    const child = spawn(bwrap, ['--ro-bind', '/', '/', '--unshare-pid', '--die-with-parent', '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => {
      if (error.length < 2000) error += chunk.toString('utf8');
    });
    child.on('error', (failure) => done({ code: null, error: failure.message }));
    child.on('close', (code) => done({ code, error }));
  });
  if (outcome.code === 0) {
    workingBubblewraps.add(bwrap);
    return bwrap;
  }
  const said = outcome.error.trim().split('\n')[0] ?? '';
  const namespaces = /namespace|uid map|Operation not permitted/i.test(said)
    ? ': the kernel does not let users make namespaces (user namespaces are off, or AppArmor restricts them); see /usr/share/doc/bubblewrap/README.Debian.gz, or install bwrap setuid'
    : `: check that \`${bubblewrapInstall}\` installed it whole`;
  throw new SandboxUnavailableError(`The sandbox cannot start: \`${bwrap}\` failed (${said || `exit code ${outcome.code}`})${namespaces}`);
}
