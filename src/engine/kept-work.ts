// Work is never lost with a worktree. Before a run's worktree folder goes (the run is deleted, or
// its finished worktree is past the retention time), what is uncommitted in it is committed onto
// the run's branch, and the branch `factory/<run-id>` is deleted only when every commit on it is
// also on another local or remote-tracking branch. Kept branches are listed per project, and
// deleted only when the user says so. Only worktrees and branches Factory made are touched, and a
// git failure (a locked index, a repository gone) leaves everything in place.

import { resolve } from 'node:path';
import type { Project, RunBranch } from '../core/api';
import { isId } from '../core/ids';
import { exists, git, isFolder, isWorktreeOf, realpathOrSelf, worktreeBranch, worktreePath, type CommandRunner, type GitContext, type SetupLogStream } from './workspace';

interface RetireOptions {
  project: Project;
  runId: string;
  /** The run's issue title, for the commit message of uncommitted work. */
  title?: string;
  /** Where else the branch's commits are, in words, when a host has them (a merged or closed pull request): the branch then counts as pushed. */
  pushedAs?: string;
  worktreesDir: string;
  env: Record<string, string>;
  run: CommandRunner;
  log?: (line: string, stream: SetupLogStream) => void;
}

interface Retired {
  /** The branch kept (it has commits found nowhere else), or undefined when it was deleted or never existed. */
  keptBranch?: string;
  /** What was done, in words: `kept branch factory/run_… (3 commits not merged anywhere)`. */
  message: string;
}

const runBranchPattern = /^factory\/(run_[0-9a-z]+)$/;

/**
 * Keeps a run's work and removes its worktree folder (see the top of this file). Resolves with
 * what was done; undefined when something failed or was not Factory's, and everything stays.
 */
export async function retireWorkspace(options: RetireOptions): Promise<Retired | undefined> {
  const log = options.log ?? (() => {});
  const repository = resolve(options.project.path);
  const path = worktreePath(options.worktreesDir, options.runId);
  const branch = worktreeBranch(options.runId);
  const context: GitContext = { env: options.env, run: options.run, log, repository };
  if (!(await isFolder(repository))) {
    log(`The project folder ${repository} is gone: the worktree ${path} stays where it is`, 'info');
    return undefined;
  }
  const commonDir = await git(context, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (!commonDir.ok) return failed(log, `the project folder is not a git repository ${commonDir.failure}`);
  let committed = '';
  if (await exists(path)) {
    const worktree: GitContext = { ...context, repository: path };
    const head = await git(worktree, ['symbolic-ref', '--quiet', 'HEAD']);
    if (!(await isWorktreeOf(context, path, await realpathOrSelf(commonDir.lines[0]!))) || head.lines[0] !== `refs/heads/${branch}`) {
      return failed(log, `${path} is not the worktree Factory made on ${branch}: left alone`);
    }
    const done = await commitEverything(worktree, `Factory: uncommitted work of ${options.runId}${options.title ? ` (${options.title})` : ''}`);
    if (done === undefined) return failed(log, 'git commit of the uncommitted work failed');
    if (done) committed = 'uncommitted work committed; ';
    if (!(await git(context, ['worktree', 'remove', '--force', path])).ok) return failed(log, `git worktree remove ${path} failed`);
  }
  const ahead = await commitsOnlyOn(context, branch);
  if (ahead === undefined) return { message: `${committed}no branch ${branch}` };
  // Work committed just now is on no host yet: the branch is kept for it.
  if (ahead > 0 && (!options.pushedAs || committed)) return { keptBranch: branch, message: `${committed}kept branch ${branch} (${plural(ahead, 'commit')} not merged anywhere)` };
  if (!(await git(context, ['branch', '-D', branch])).ok) return failed(log, `git branch -D ${branch} failed`);
  return { message: `${committed}deleted branch ${branch} (${ahead > 0 ? `its commits are in ${options.pushedAs}` : 'all its commits are on other branches'})` };
}

/**
 * Commits everything in the worktree but what .gitignore ignores, as one commit (as Factory when git
 * has no identity configured). Resolves true when something was committed, false when there was
 * nothing, undefined when git failed (its words are in the log).
 */
export async function commitEverything(worktree: GitContext, message: string): Promise<boolean | undefined> {
  if (!(await git(worktree, ['add', '--all'])).ok) return undefined;
  if ((await git(worktree, ['diff', '--cached', '--quiet'])).ok) return false;
  const identity = (await git(worktree, ['config', 'user.email'])).ok ? [] : ['-c', 'user.name=Factory', '-c', 'user.email=factory@localhost'];
  return (await git(worktree, [...identity, 'commit', '--quiet', '--no-verify', '-m', message])).ok ? true : undefined;
}

/** How many commits of `branch` no other local or remote-tracking branch has; undefined when there is no such branch. */
async function commitsOnlyOn(context: GitContext, branch: string): Promise<number | undefined> {
  if (!(await git(context, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok) return undefined;
  // --exclude patterns for --branches are written without refs/heads/ (git rev-list's rule).
  const count = await git(context, ['rev-list', '--count', branch, '--not', `--exclude=${branch}`, '--branches', '--remotes']);
  return count.ok ? Number(count.lines[0]) : undefined;
}

/** The project's run branches (`factory/run_…`), with their commits found nowhere else, last commit time and whether a remote has them. */
export async function listRunBranches(project: Project, env: Record<string, string>, run: CommandRunner): Promise<Omit<RunBranch, 'runTitle' | 'inUse'>[]> {
  const context: GitContext = { env, run, log: () => {}, repository: resolve(project.path) };
  if (!(await isFolder(context.repository))) return [];
  const refs = await git(context, ['for-each-ref', '--format=%(refname:short)%09%(committerdate:unix)', 'refs/heads/factory/']);
  const branches: Omit<RunBranch, 'runTitle' | 'inUse'>[] = [];
  for (const line of refs.ok ? refs.lines : []) {
    const [branch = '', time] = line.split('\t');
    const runId = runBranchPattern.exec(branch)?.[1];
    if (!runId || !isId(runId, 'run')) continue;
    const ahead = (await commitsOnlyOn(context, branch)) ?? 0;
    const remote = await git(context, ['branch', '--remotes', '--contains', branch]);
    branches.push({ branch, runId, ahead, lastCommitAt: Number(time) * 1000, pushed: remote.ok && remote.lines.some((name) => name.trim()) });
  }
  return branches;
}

/** Deletes one run branch Factory made; resolves with the commits lost (found on no other branch). Throws for a branch that is not a run branch or git failing. */
export async function deleteRunBranch(project: Project, branch: string, env: Record<string, string>, run: CommandRunner): Promise<number> {
  if (!runBranchPattern.test(branch)) throw new Error(`${branch} is not a branch Factory made (factory/run_…)`);
  const context: GitContext = { env, run, log: () => {}, repository: resolve(project.path) };
  const ahead = await commitsOnlyOn(context, branch);
  if (ahead === undefined) throw new Error(`There is no branch ${branch} in ${context.repository}`);
  const deleted = await git(context, ['branch', '-D', branch]);
  if (!deleted.ok) throw new Error(`git branch -D ${branch} failed ${deleted.failure}`);
  return ahead;
}

function failed(log: NonNullable<RetireOptions['log']>, reason: string): undefined {
  log(`The worktree was not removed: ${reason}; nothing was deleted`, 'info');
  return undefined;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
