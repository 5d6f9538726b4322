// A run's workspace (DESIGN §4 "Workspaces"): for a project with `worktrees`, its own git worktree
// at `<data>/worktrees/<runId>` on the branch `factory/<runId>`; otherwise the project folder. The
// project's setup command then runs in it. Every command, its output and the outcome go to the
// run's setup log. Processes come in through a port (`CommandRunner`), so this file spawns nothing.

import { readdir, realpath, rmdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Project } from '../core/api';
import { FactoryError, quote } from '../core/errors';
import { isId } from '../core/ids';
import { formatDuration } from '../core/runs';

type OutputStream = 'out' | 'err';
export type SetupLogStream = OutputStream | 'info';

/** Runs one process without a shell; the engine passes `runProcess`, tests a small spawn wrapper. */
export type CommandRunner = (options: {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  onLine?: (line: string, stream: OutputStream) => void;
}) => Promise<{ exitCode: number | null; timedOut: boolean; cancelled: boolean; spawnError?: string }>;

export interface PrepareOptions {
  project: Project;
  runId: string;
  /** `<dataDir>/worktrees`. */
  worktreesDir: string;
  /** The environment for git and the setup command (the caller builds it, with PATH and HOME). */
  env: Record<string, string>;
  run: CommandRunner;
  /** Runs the setup command (the project's code), where it differs from git's `run`: a sandbox (engine/runner.ts). */
  setupRun?: CommandRunner;
  /** The run's setup log. */
  log: (line: string, stream: SetupLogStream) => void;
  signal?: AbortSignal;
  /** Default 30 minutes. */
  setupTimeoutMs?: number;
  /** Milliseconds, for the duration in the closing log line; default `Date.now`. */
  now?: () => number;
  /**
   * A follow-up of a pull request: a new worktree starts from the pull request's branch as the
   * remote has it (fetched into `refs/remotes/<remote>/<branch>`, what the push's lease expects).
   */
  followUp?: { remote: string; branch: string };
}

/** The workspace could not be prepared or removed; the message says which command failed and why. */
export class WorkspaceError extends FactoryError {
  override name = 'WorkspaceError';
}

const defaultSetupTimeoutMs = 30 * 60 * 1000;

/** `<worktreesDir>/<runId>`, absolute. Throws WorkspaceError for a run id that is not safe in a path. */
export function worktreePath(worktreesDir: string, runId: string): string {
  if (!isId(runId, 'run')) throw new WorkspaceError(`Invalid run id ${quote(runId)}`);
  return join(resolve(worktreesDir), runId);
}

/** The branch a run's worktree is on. */
export function worktreeBranch(runId: string): string {
  return `factory/${runId}`;
}

/**
 * Prepares the run's workspace and returns its folder: the worktree (or, when the project is a
 * subfolder of its repository, the same subfolder inside the worktree), or the project folder when
 * worktrees are off. A retried run reuses its worktree, or its branch when only the branch is left.
 * Throws WorkspaceError, with the reason and git's last error line, when the project folder is
 * missing, is not a git repository or has no commits while worktrees are on, git fails, or the
 * setup command fails, times out or is cancelled. The setup log ends with "Setup finished in …"
 * (none is written for a project folder used as it is, with no setup command) or "Setup failed: …".
 */
export async function prepareWorkspace(options: PrepareOptions): Promise<string> {
  const now = options.now ?? Date.now;
  const started = now();
  try {
    await requireFolder(options.project.path);
    const workspace = options.project.worktrees ? await prepareWorktree(options) : resolve(options.project.path);
    const command = options.project.setupCommand?.trim();
    if (command) await runSetupCommand(options, command, workspace);
    // A project folder used as it is needs no setup, and gets no setup log.
    if (options.project.worktrees || command) options.log(`Setup finished in ${formatDuration(now() - started)}`, 'info');
    return workspace;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    options.log(`Setup failed: ${reason}`, 'info');
    throw error instanceof WorkspaceError ? error : new WorkspaceError(reason);
  }
}

// ───────────────────────────── Worktrees ─────────────────────────────

async function prepareWorktree(options: PrepareOptions): Promise<string> {
  const path = worktreePath(options.worktreesDir, options.runId);
  const branch = worktreeBranch(options.runId);
  const context: GitContext = { ...options, repository: resolve(options.project.path) };

  // Is the project folder in a repository, and where in it? (`sub/dir/` for a monorepo package.)
  const probe = await git(context, ['rev-parse', '--git-common-dir', '--show-prefix']);
  if (!probe.ok) throw new WorkspaceError(`Project folder ${quote(context.repository)} is not a git repository ${probe.failure}`);
  const commonDir = await realpathOrSelf(resolve(context.repository, probe.lines[0] ?? '.git'));
  const prefix = probe.lines[1] ?? '';

  if (await exists(path)) {
    if (await isWorktreeOf(context, path, commonDir)) {
      options.log(`Reusing the worktree ${path}`, 'info');
      return await workspaceInside(path, prefix);
    }
    if (!(await isEmptyFolder(path))) {
      throw new WorkspaceError(`The folder ${quote(path)} exists and is not a worktree of ${quote(context.repository)}`);
    }
    await rmdir(path);
  }

  const branchExists = (await git(context, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
  if (!branchExists) {
    const head = await git(context, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
    if (!head.ok) {
      throw new WorkspaceError(`The repository ${quote(context.repository)} has no commits yet; make a first commit so runs can branch from it`);
    }
  }
  let start = 'HEAD';
  if (!branchExists && options.followUp) {
    const { remote, branch: remoteBranch } = options.followUp;
    const tracking = `refs/remotes/${remote}/${remoteBranch}`;
    const fetched = await git(context, ['fetch', '--no-tags', remote, `+refs/heads/${remoteBranch}:${tracking}`]);
    if (!fetched.ok) throw new WorkspaceError(`The pull request's branch ${quote(remoteBranch)} could not be fetched from the remote ${quote(remote)} ${fetched.failure}`);
    start = tracking;
  }
  const addArgs = branchExists ? ['worktree', 'add', path, branch] : ['worktree', 'add', '-b', branch, path, start];
  let added = await git(context, addArgs);
  if (!added.ok && !(await exists(path))) {
    // A worktree deleted by hand stays registered ("missing but already registered"): clear that one
    // registration and try once more. When something else was wrong, the second error says so.
    const cleared = await git(context, ['worktree', 'remove', '--force', path]);
    if (cleared.ok) added = await git(context, addArgs);
  }
  if (!added.ok) throw new WorkspaceError(`git worktree add failed ${added.failure}`);
  return await workspaceInside(path, prefix);
}

/** True when `path` is the top of a worktree whose repository is `commonDir` (a real path). */
export async function isWorktreeOf(context: GitContext, path: string, commonDir: string): Promise<boolean> {
  const inside = await git({ ...context, repository: path }, ['rev-parse', '--show-toplevel', '--git-common-dir']);
  if (!inside.ok || inside.lines.length < 2) return false;
  const topLevel = await realpathOrSelf(inside.lines[0]!);
  const itsCommonDir = await realpathOrSelf(resolve(path, inside.lines[1]!));
  return topLevel === (await realpathOrSelf(path)) && itsCommonDir === commonDir;
}

async function workspaceInside(worktree: string, prefix: string): Promise<string> {
  if (!prefix) return worktree;
  const folder = join(worktree, prefix.replace(/\/+$/, ''));
  if (!(await isFolder(folder))) {
    throw new WorkspaceError(`The project folder ${quote(prefix)} is not in the repository's HEAD commit, so the worktree has no such folder`);
  }
  return folder;
}

// ───────────────────────────── Setup command ─────────────────────────────

async function runSetupCommand(options: PrepareOptions, command: string, workspace: string): Promise<void> {
  const timeoutMs = options.setupTimeoutMs ?? defaultSetupTimeoutMs;
  options.log(`$ ${command}`, 'info');
  const result = await runLogged({ ...options, run: options.setupRun ?? options.run }, { command: '/bin/sh', args: ['-c', command], cwd: workspace, timeoutMs });
  if (result.ok) return;
  if (result.cancelled) throw new WorkspaceError('Setup cancelled');
  if (result.timedOut) throw new WorkspaceError(`The setup command timed out after ${formatDuration(timeoutMs)}`);
  throw new WorkspaceError(`The setup command failed ${result.failure}`);
}

// ───────────────────────────── Running and logging commands ─────────────────────────────

export interface GitContext {
  env: Record<string, string>;
  run: CommandRunner;
  log: (line: string, stream: SetupLogStream) => void;
  signal?: AbortSignal;
  /** The folder git works in (`-C`). */
  repository: string;
}

interface Outcome {
  ok: boolean;
  cancelled: boolean;
  timedOut: boolean;
  /** Standard output, line by line. */
  lines: string[];
  /** Why it failed, for a message: "(exit 128): fatal: not a git repository". */
  failure: string;
}

/** Runs git in `context.repository` without a shell, logging the command line and its output. */
export async function git(context: GitContext, args: string[]): Promise<Outcome> {
  context.log(`$ ${formatCommand(['git', ...args])}`, 'info');
  const outcome = await runLogged(context, { command: 'git', args: ['-C', context.repository, ...args], cwd: context.repository });
  if (outcome.cancelled) throw new WorkspaceError('Setup cancelled');
  return outcome;
}

async function runLogged(
  context: Pick<GitContext, 'env' | 'run' | 'log' | 'signal'>,
  command: { command: string; args: string[]; cwd: string; timeoutMs?: number },
): Promise<Outcome> {
  if (context.signal?.aborted) return { ok: false, cancelled: true, timedOut: false, lines: [], failure: '(cancelled)' };
  const lines: string[] = [];
  let lastErrorLine = '';
  const result = await context.run({
    ...command,
    env: context.env,
    signal: context.signal,
    onLine: (line, stream) => {
      context.log(line, stream);
      if (stream === 'out') lines.push(line);
      else if (line.trim()) lastErrorLine = line.trim();
    },
  });
  const ok = result.exitCode === 0 && !result.timedOut && !result.cancelled && !result.spawnError;
  let failure: string;
  if (result.spawnError) failure = `(could not start ${quote(command.command)}: ${result.spawnError})`;
  else if (result.cancelled) failure = '(cancelled)';
  else if (result.timedOut) failure = '(timed out)';
  else failure = result.exitCode === null ? '(killed by a signal)' : `(exit ${result.exitCode})`;
  if (lastErrorLine && !result.spawnError) failure += `: ${lastErrorLine}`;
  return { ok, cancelled: result.cancelled, timedOut: result.timedOut, lines, failure };
}

/** A command line for the log, each argument quoted the way a shell would need it. */
function formatCommand(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./^{}-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}


// ───────────────────────────── Folders ─────────────────────────────

async function requireFolder(path: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new WorkspaceError(`Project folder ${quote(path)} does not exist`);
  if (!info.isDirectory()) throw new WorkspaceError(`Project path ${quote(path)} is not a folder`);
}

export async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

export async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function isEmptyFolder(path: string): Promise<boolean> {
  const entries = await readdir(path).catch(() => undefined);
  return entries !== undefined && entries.length === 0;
}

export async function realpathOrSelf(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}
