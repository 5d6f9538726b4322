// Where a run's steps execute (issue 25, point 1): the seam between the run service (the queue and
// the step driver, engine/run-queue.ts and engine/step-driver.ts) and the place processes run. The
// run service asks its run's ExecutionRunner to prepare a workspace, to run each process of a step
// with its output streamed (stopped by the step's AbortSignal), to bring the work home and to clean
// up; it never asks which kind of runner it talks to.
//
// - LocalRunner: this computer, as the user: today's behaviour (workspace.ts, process.ts).
// - SandboxRunner: this computer, every step process (shell steps, agent CLIs, the setup command)
//   wrapped in bubblewrap (sandbox.ts). Git's own work on the worktree (add, commit, remove) stays
//   outside: it is Factory's, not the step's.
// - SshRunner: another machine through the system ssh (ssh.ts): a remote worktree and the branch
//   fetched home before it goes (ssh-workspace.ts), remote processes (ssh-run.ts, ssh-leftovers.ts).

import { dirname } from 'node:path';
import type { Project, Runner } from '../core/api';
import { errorMessage } from '../core/errors';
import { runProcess, type ProcessResult, type RunProcessOptions } from './process';
import { sandboxCommand } from './sandbox';
import { definedEntries, ensureControlFolder, type SshSetup } from './ssh';
import { stopLeftoverProcesses } from './ssh-leftovers';
import { runRemote } from './ssh-run';
import { bringWorkHome, prepareRemoteWorkspace, removeRemoteWorkspace } from './ssh-workspace';
import { prepareWorkspace, realpathOrSelf, worktreeBranch, type CommandRunner, type SetupLogStream } from './workspace';

/** What a step's process needs beyond the options of runProcess, for runners that wrap it. */
interface ExecNeeds {
  /** Names the process on a remote host (`<run-id>.<step-id>`): its pid file there. */
  key: string;
  /** The harness's declared folders (HarnessDefinition.sandboxPaths), mounted read-write in a sandbox. */
  harnessPaths?: readonly string[];
}


interface WorkspaceRequest {
  project: Project;
  runId: string;
  worktreesDir: string;
  /** The environment for git and the setup command. */
  env: Record<string, string>;
  log: (line: string, stream: SetupLogStream) => void;
  signal: AbortSignal;
  run: CommandRunner;
  followUp?: { remote: string; branch: string };
}

interface CollectRequest {
  project: Project;
  runId: string;
  title?: string;
  env: Record<string, string>;
  log: (line: string) => void;
}

export interface ExecutionRunner {
  readonly runner: Readonly<Runner>;
  /** True when processes run on another machine: commands are found there by name, not resolved here. */
  readonly remote: boolean;
  /** Makes the run's workspace and runs the setup command in it; resolves with the folder as steps see it. Rejects in words. */
  prepare(request: WorkspaceRequest): Promise<string>;
  /** Runs one process of a step in its workspace, output streamed; aborting `options.signal` stops its whole tree. */
  exec(options: RunProcessOptions, needs: ExecNeeds): Promise<ProcessResult>;
  /**
   * Brings a finished run's work into the local repository and removes what `prepare` made
   * elsewhere; resolves with the branch it fetched home, or undefined when the work is here already
   * (local runners: kept-work.ts retires their worktrees, as before).
   */
  collect(request: CollectRequest): Promise<string | undefined>;
  /** Stops processes this runner's host still runs for runs not in `liveRunIds` (Factory was killed); resolves with their keys. */
  stopLeftovers?(liveRunIds: readonly string[]): Promise<string[]>;
}

/** This computer, as the user. */
class LocalRunner implements ExecutionRunner {
  readonly remote = false;
  constructor(readonly runner: Readonly<Runner>) {}

  prepare(request: WorkspaceRequest): Promise<string> {
    return prepareWorkspace(request);
  }

  exec(options: RunProcessOptions, _needs?: ExecNeeds): Promise<ProcessResult> {
    return runProcess(options);
  }

  async collect(): Promise<undefined> {
    return undefined;
  }
}

/** The folders an agent CLI's install needs read-only in a sandbox: where it is, and where its link points, when outside /usr. */
async function installFolders(command: string): Promise<string[]> {
  if (!command.startsWith('/')) return [];
  const real = await realpathOrSelf(command);
  // An npm-installed CLI's link points into its package (…/node_modules/<name>/bin/cli.js): the package is needed whole.
  const folders = [dirname(command), dirname(real), dirname(dirname(real))];
  return [...new Set(folders)].filter((folder) => folder !== '/' && !/^\/usr(\/|$)/.test(folder) && !/^\/(s?bin|lib(32|64|x32)?)(\/|$)/.test(folder));
}

/** This computer, every step process inside bubblewrap (sandbox.ts); never a fall-back to no sandbox. */
class SandboxRunner extends LocalRunner {
  constructor(runner: Readonly<Runner>, private readonly bwrapPath?: string) {
    super(runner);
  }

  override prepare(request: WorkspaceRequest): Promise<string> {
    // git (Factory's) runs here; the setup command (the project's) inside the sandbox, in the workspace.
    const setupRun: CommandRunner = (options) => this.exec({ ...options }, { key: `${request.runId}.setup` });
    return prepareWorkspace({ ...request, setupRun });
  }

  override async exec(options: RunProcessOptions, needs: ExecNeeds = { key: 'run_0' }): Promise<ProcessResult> {
    let wrapped;
    try {
      wrapped = await sandboxCommand(this.runner, {
        workspace: options.cwd, env: options.env, command: options.command, args: options.args,
        ...(needs.harnessPaths ? { harnessPaths: needs.harnessPaths } : {}),
        readOnlyPaths: await installFolders(options.command),
        ...(this.bwrapPath ? { bwrapPath: this.bwrapPath } : {}),
      });
    } catch (error) {
      return { exitCode: null, signal: null, timedOut: false, cancelled: false, output: '', outputTruncated: false, durationMs: 0, spawnError: errorMessage(error) };
    }
    return runProcess({ ...options, command: wrapped.command, args: wrapped.args, env: wrapped.env });
  }
}

/** Another machine through the system ssh: a remote worktree, remote processes, the branch fetched home. */
export class SshRunner implements ExecutionRunner {
  readonly remote = true;
  constructor(readonly runner: Readonly<Runner>, private readonly setup: () => Promise<SshSetup>) {}

  async prepare(request: WorkspaceRequest): Promise<string> {
    const setup = await this.setup();
    const localEnv = definedEntries(process.env);
    const remoteUrl = await originUrl(request);
    request.log(`Preparing the workspace on ${this.runner.host} (${this.runner.name})`, 'info');
    const workspace = await prepareRemoteWorkspace(this.runner, setup, { projectId: request.project.id, runId: request.runId, remoteUrl, localEnv });
    request.log(`Worktree ${workspace} on ${worktreeBranch(request.runId)}`, 'info');
    const command = request.project.setupCommand?.trim();
    if (command) {
      request.log(`$ ${command}`, 'info');
      const result = await this.exec({ command: '/bin/sh', args: ['-c', command], cwd: workspace, env: request.env, signal: request.signal, timeoutMs: 30 * 60_000, onLine: (line, stream) => request.log(line, stream) }, { key: `${request.runId}.setup` });
      if (result.cancelled) throw new Error('Setup cancelled');
      if (result.exitCode !== 0) throw new Error(`The setup command failed on ${this.runner.host} (${result.timedOut ? 'timed out' : `exit ${result.exitCode ?? result.signal}`})`);
    }
    return workspace;
  }

  async exec(options: RunProcessOptions, needs: ExecNeeds): Promise<ProcessResult> {
    const setup = await this.setup();
    const result = await runRemote(this.runner, setup, {
      cwd: options.cwd, command: options.command, args: options.args, env: options.env, key: needs.key,
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      ...(options.onLine ? { onLine: options.onLine } : {}),
      ...(options.onChunk ? { onChunk: options.onChunk } : {}),
      ...(options.outputLimit !== undefined ? { outputLimit: options.outputLimit } : {}),
    }).catch((error): ProcessResult => ({ exitCode: null, signal: null, timedOut: false, cancelled: false, output: '', outputTruncated: false, durationMs: 0, spawnError: errorMessage(error) }));
    // `exec` of the bootstrap: 127 is a command the host does not have.
    if (result.exitCode === 127 && !result.spawnError) return { ...result, spawnError: `\`${options.command}\` was not found on ${this.runner.host}: install it there` };
    return result;
  }

  async collect(request: CollectRequest): Promise<string> {
    const setup = await this.setup();
    const localEnv = definedEntries(process.env);
    const commit = await bringWorkHome(this.runner, setup, { projectId: request.project.id, runId: request.runId, localRepository: request.project.path, ...(request.title ? { title: request.title } : {}), localEnv });
    request.log(`The work came home from ${this.runner.host}: ${worktreeBranch(request.runId)} at ${commit.slice(0, 12)}`);
    await removeRemoteWorkspace(this.runner, setup, { projectId: request.project.id, runId: request.runId, localEnv });
    return worktreeBranch(request.runId);
  }

  /** Stops remote processes of runs not in `liveRunIds` (Factory was killed); resolves with their keys. */
  async stopLeftovers(liveRunIds: readonly string[]): Promise<string[]> {
    return stopLeftoverProcesses(this.runner, await this.setup(), liveRunIds);
  }
}

/** The project's `origin` as the host will clone it. */
async function originUrl(request: WorkspaceRequest): Promise<string> {
  let url = '';
  const result = await request.run({
    command: 'git', args: ['-C', request.project.path, 'remote', 'get-url', 'origin'], cwd: request.project.path, env: request.env,
    onLine: (line, stream) => { if (stream === 'out' && line.trim()) url = line.trim(); },
  });
  if (result.exitCode !== 0 || !url) throw new Error(`The project ${request.project.name} has no remote \`origin\`: an ssh runner clones the project from it (add one with \`git remote add origin <url>\`)`);
  return url;
}

/** The ssh setup of this Factory: a private socket folder; the user's known hosts and ssh config. */
export function defaultSshSetup(): () => Promise<SshSetup> {
  let setup: Promise<SshSetup> | undefined;
  return () => (setup ??= ensureControlFolder().then((controlFolder) => ({ controlFolder })));
}

/** The ExecutionRunner for a runner. */
export function executionRunner(runner: Readonly<Runner>, ssh: () => Promise<SshSetup>): ExecutionRunner {
  if (runner.kind === 'sandbox') return new SandboxRunner(runner);
  if (runner.kind === 'ssh') return new SshRunner(runner, ssh);
  return new LocalRunner(runner);
}
