// A run's workspace on an ssh runner's host (issue 25): the project's clone in the work folder, fetched,
// and a worktree on `factory/<run-id>`. The work comes home over git: the remote worktree's leftovers
// are committed, then the local repository fetches the run's branch from it through the same ssh
// options (GIT_SSH_COMMAND); then the remote worktree and branch go.

import { runProcess } from './process';
import {
  definedEntries, remoteWorkDir, runRemoteScript, shellWord, sshClientEnvironment, SshError, sshOptions, type SshRunner, type SshSetup,
} from './ssh';

/** Where a project's clone and a run's worktree live on the host. */
function remotePaths(runner: SshRunner, projectId: string, runId: string): { repository: string; worktree: string } {
  const workDir = remoteWorkDir(runner);
  return { repository: `${workDir}/repositories/${projectId}`, worktree: `${workDir}/worktrees/${runId}` };
}

interface RemoteWorkspaceOptions {
  projectId: string;
  runId: string;
  /** The project's remote as the host can reach it (its `origin` URL). */
  remoteUrl: string;
  /** What the branch starts from in the clone; default the remote's default branch (origin/HEAD). */
  base?: string;
  localEnv?: Record<string, string>;
}

/**
 * Makes the run's workspace on the host: clones the project's remote into the work folder once,
 * fetches it, and adds a worktree on `factory/<run-id>`. Resolves with the worktree's path there.
 */
export async function prepareRemoteWorkspace(runner: SshRunner, setup: SshSetup, options: RemoteWorkspaceOptions): Promise<string> {
  const { repository, worktree } = remotePaths(runner, options.projectId, options.runId);
  const branch = `factory/${options.runId}`;
  const script = [
    'set -e',
    `repo=${shellWord(repository)}; tree=${shellWord(worktree)}`,
    `if [ ! -d "$repo/.git" ]; then mkdir -p "\${repo%/*}"; git clone --quiet -- ${shellWord(options.remoteUrl)} "$repo"; fi`,
    'git -C "$repo" fetch --quiet --prune origin',
    'git -C "$repo" remote set-head origin --auto >/dev/null 2>&1 || true',
    'mkdir -p "${tree%/*}"',
    `git -C "$repo" worktree add --quiet -b ${shellWord(branch)} "$tree" ${shellWord(options.base ?? 'origin/HEAD')}`,
    'cd "$tree" && pwd',
  ].join('\n');
  const output = await runRemoteScript(runner, setup, script, { localEnv: options.localEnv, timeoutMs: 30 * 60_000 });
  return output.trim().split('\n').pop() ?? worktree;
}

/**
 * Brings a run's work home: commits what is uncommitted in the remote worktree onto its branch,
 * then fetches `factory/<run-id>` from there into the local repository (same ssh options, through
 * GIT_SSH_COMMAND). Resolves with the branch's commit.
 */
export async function bringWorkHome(runner: SshRunner, setup: SshSetup, options: { projectId: string; runId: string; localRepository: string; title?: string; localEnv?: Record<string, string> }): Promise<string> {
  const { worktree } = remotePaths(runner, options.projectId, options.runId);
  const branch = `factory/${options.runId}`;
  const message = `Factory: uncommitted work of ${options.runId}${options.title ? ` (${options.title})` : ''}`;
  await runRemoteScript(runner, setup, [
    `cd ${shellWord(worktree)} || exit 0`,
    'git add -A',
    `git diff --cached --quiet || git -c user.name=Factory -c user.email=factory@localhost commit --quiet --no-verify -m ${shellWord(message)}`,
  ].join('\n'), { localEnv: options.localEnv });
  const localEnv = options.localEnv ?? definedEntries(process.env);
  const path = worktree.startsWith('/') ? worktree : `/~/${worktree}`;
  const url = `ssh://${runner.user ? `${encodeURIComponent(runner.user)}@` : ''}${runner.host}${runner.port ? `:${runner.port}` : ''}${path}`;
  const sshCommand = [setup.sshCommand ?? 'ssh', ...sshOptions(runner, setup)].map(shellWord).join(' ');
  const errors: string[] = [];
  const fetched = await runProcess({
    command: 'git', args: ['-C', options.localRepository, 'fetch', '--quiet', '--no-tags', url, `+${branch}:${branch}`], cwd: options.localRepository,
    env: { ...sshClientEnvironment(localEnv), GIT_SSH_COMMAND: sshCommand, GIT_TERMINAL_PROMPT: '0' }, timeoutMs: 30 * 60_000, killGraceMs: 1000,
    onLine: (line, stream) => { if (stream === 'err' && line.trim() && errors.length < 20) errors.push(line.trim()); },
  });
  if (fetched.exitCode !== 0) throw new SshError(`git could not fetch ${branch} from ${runner.host}: ${errors.slice(-3).join(' ') || `exit code ${fetched.exitCode ?? fetched.signal}`}`);
  const head = await runProcess({ command: 'git', args: ['-C', options.localRepository, 'rev-parse', branch], cwd: options.localRepository, env: sshClientEnvironment(localEnv) });
  return head.output.trim();
}

/** Removes the run's worktree and branch on the host (after bringWorkHome). */
export async function removeRemoteWorkspace(runner: SshRunner, setup: SshSetup, options: { projectId: string; runId: string; localEnv?: Record<string, string> }): Promise<void> {
  const { repository, worktree } = remotePaths(runner, options.projectId, options.runId);
  await runRemoteScript(runner, setup, [
    `repo=${shellWord(repository)}`,
    `git -C "$repo" worktree remove --force ${shellWord(worktree)} 2>/dev/null || rm -rf ${shellWord(worktree)}`,
    'git -C "$repo" worktree prune',
    `git -C "$repo" branch -D ${shellWord(`factory/${options.runId}`)} >/dev/null 2>&1 || true`,
  ].join('\n'), { localEnv: options.localEnv });
}
