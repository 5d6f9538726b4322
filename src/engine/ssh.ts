// The ssh runner (issue 25, PROVIDERS.md §10): steps run on another machine through the system's
// OpenSSH client, never a re-implementation. Every connection is non-interactive (BatchMode), checks
// the host's key (strict, or accept-new), and reuses one master connection per host (ControlMaster,
// its socket in a private folder).
//
// A remote step runs as `sh -c <bootstrap>` whose fixed text does, on the host: cd to the step's
// folder, read the environment from the first lines of stdin (NAME=base64, ended by an empty line),
// write its process group id to a pid file under the work folder, and exec the step's command in a
// session of its own (`setsid -w`), which then reads the rest of stdin. So no value of the
// environment is ever on a command line (ours, or the host's), and cancel or timeout stops the
// whole remote tree: `kill -TERM -<pgid>`, then KILL after the grace. Without a tty the remote
// processes would outlive the local ssh (PROVIDERS.md §10), so that kill is what stops them. After a
// restart, stopLeftoverProcesses stops what runs from pid files no live run owns.
//
// The work comes home over git: the remote worktree's leftovers are committed, then the local
// repository fetches the run's branch from it through the same ssh options (GIT_SSH_COMMAND).

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runner } from '../core/api';
import { FactoryError, quote } from '../core/errors';
import { defaultRemoteWorkDir } from '../core/runners';
import { setTimer } from '../core/timers';
import { runProcess, type ProcessResult, type RunProcessOptions } from './process';

/** What the ssh runner needs of a Runner. */
export type SshRunner = Pick<Runner, 'host' | 'port' | 'user' | 'identityFile' | 'knownHosts' | 'workDir'>;

/** How this Factory talks ssh: where its master sockets and (optionally) known hosts are. */
export interface SshSetup {
  /** A private folder (0700, ours) for the ControlMaster sockets; keep its path short (socket paths are limited to about 100 bytes). */
  controlFolder: string;
  /** The known-hosts file; default the user's (~/.ssh/known_hosts). */
  knownHostsFile?: string;
  /** An ssh config file (`-F`); default the user's. Tests pass /dev/null. */
  configFile?: string;
  /** The ssh client; default `ssh` on PATH. */
  sshCommand?: string;
  /** Seconds a master connection stays open when idle (default 300). */
  controlPersistSec?: number;
}

/** The remote side refused or could not be reached; the message says what to do. */
export class SshError extends FactoryError {
  override name = 'SshError';
}

/** A word for a POSIX shell: single-quoted, so the remote shell takes it as it is. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The `-o` options and identity, without the destination: what ssh and GIT_SSH_COMMAND both use. */
export function sshOptions(runner: SshRunner, setup: SshSetup): string[] {
  const options = [
    '-T',
    '-o', 'BatchMode=yes',
    '-o', `StrictHostKeyChecking=${runner.knownHosts === 'accept-new' ? 'accept-new' : 'yes'}`,
    '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=3',
    // Calls use the master connection when there is one (ensureMaster) and never become one: a master
    // started inside a call would be stopped with that call's process group, and the calls sharing it with it.
    '-o', 'ControlMaster=no', '-o', `ControlPath=${join(setup.controlFolder, '%C')}`,
  ];
  if (setup.configFile) options.unshift('-F', setup.configFile);
  if (setup.knownHostsFile) options.push('-o', `UserKnownHostsFile=${setup.knownHostsFile}`);
  if (runner.identityFile) options.push('-i', runner.identityFile, '-o', 'IdentitiesOnly=yes');
  return options;
}

/** The whole ssh argument list for one remote command (already a shell command line for the host). */
export function sshArguments(runner: SshRunner, setup: SshSetup, remoteCommand: string): string[] {
  return [...sshOptions(runner, setup), ...destination(runner), remoteCommand];
}

function destination(runner: SshRunner): string[] {
  if (!runner.host) throw new RangeError('An ssh runner needs a host');
  return [...(runner.port ? ['-p', String(runner.port)] : []), ...(runner.user ? ['-l', runner.user] : []), '--', runner.host];
}

const mastersStarting = new Map<string, Promise<void>>();

/**
 * Makes sure a master connection to the host runs (ssh -M -N -f, ControlPersist), outside every
 * call's process group, so calls reuse one connection. Rejects with SshError in words when the host
 * cannot be reached, refuses the key, or its host key is unknown or changed. One start at a time per
 * host and socket folder; a master already there is used as it is.
 */
export function ensureMaster(runner: SshRunner, setup: SshSetup, localEnv: Record<string, string> = definedEntries(process.env)): Promise<void> {
  const key = JSON.stringify([setup.controlFolder, setup.knownHostsFile, runner.host, runner.port, runner.user, runner.identityFile]);
  const starting = mastersStarting.get(key) ?? startMaster(runner, setup, sshClientEnvironment(localEnv)).finally(() => mastersStarting.delete(key));
  mastersStarting.set(key, starting);
  return starting;
}

async function startMaster(runner: SshRunner, setup: SshSetup, env: Record<string, string>): Promise<void> {
  const ssh = setup.sshCommand ?? 'ssh';
  const check = await exitOf(ssh, [...sshOptions(runner, setup), '-O', 'check', ...destination(runner)], env);
  if (check.code === 0) return;
  const options = sshOptions(runner, setup).map((option) => (option === 'ControlMaster=no' ? 'ControlMaster=yes' : option));
  const started = await exitOf(ssh, [...options, '-o', `ControlPersist=${setup.controlPersistSec ?? 300}`, '-N', '-f', ...destination(runner)], env);
  if (started.code !== 0) throw new SshError(explainSshFailure(runner, started.errors));
}

/**
 * Runs ssh and resolves at its exit with its stderr lines (read from a file: a master that went to
 * the background keeps its stderr open, and must not die writing to a closed pipe).
 */
async function exitOf(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; errors: string[] }> {
  const folder = await mkdtemp(join(tmpdir(), 'factory-ssh-log-'));
  const logPath = join(folder, 'stderr');
  const log = await open(logPath, 'w', 0o600);
  try {
    const code = await new Promise<number | null>((done) => {
      const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', log.fd], detached: true });
      child.on('error', () => done(null));
      child.on('exit', (exitCode) => done(exitCode));
      child.unref();
    });
    const errors = (await readFile(logPath, 'utf8').catch(() => '')).split('\n').map((line) => line.trim()).filter(Boolean).slice(-20);
    return { code, errors };
  } finally {
    await log.close();
    await rm(folder, { recursive: true, force: true });
  }
}

/** The runner's remote work folder as a shell word: absolute, or relative to the login folder. */
export function remoteWorkDir(runner: SshRunner): string {
  return runner.workDir ?? defaultRemoteWorkDir;
}

/** Makes the private folder for master sockets (0700) and checks that it is ours and private. */
export async function ensureControlFolder(path: string = join(tmpdir(), `factory-ssh-${process.getuid?.() ?? 'user'}`)): Promise<string> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const info = await lstat(path);
  if (!info.isDirectory() || (process.getuid && info.uid !== process.getuid()) || (info.mode & 0o077) !== 0) {
    throw new SshError(`The folder ${quote(path)} for ssh connections must be a private folder of this user (mode 0700): remove it and try again`);
  }
  return path;
}

/** The environment the local ssh process gets: what it needs to find keys and agents, no step secrets. */
export function sshClientEnvironment(env: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'SSH_AUTH_SOCK']) if (env[name] !== undefined) kept[name] = env[name]!;
  return kept;
}

const environmentName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The bootstrap every remote step runs under (`sh -c <this> factory-step <folder> <pidfile> <stopfile> <command> <args…>`).
 * Values are base64 so that any byte, a newline included, passes; a trailing `x` keeps their trailing newlines.
 * A stop may come before the pid file exists (the bootstrap started but has not written it yet): the
 * stop leaves `<stopfile>` (one name per runRemote call) before it reads the pid file, and the
 * session's leader writes its pid before it looks for `<stopfile>`, so one of them always sees the
 * other: either the stop finds the pid and kills the group, or the leader finds the stop and ends
 * without starting the command.
 */
export const remoteBootstrap = [
  'cd "$1" || { echo "factory: the folder $1 does not exist on this host" >&2; exit 97; }',
  'pidfile=$2; stopfile=$3; shift 3',
  'while IFS= read -r line; do',
  '  [ -z "$line" ] && break',
  '  value=$(printf %s "${line#*=}" | base64 -d; printf x)',
  '  export "${line%%=*}=${value%x}"',
  'done',
  'command -v setsid >/dev/null 2>&1 || { echo "factory: setsid was not found on this host (util-linux)" >&2; exit 98; }',
  'mkdir -p "${pidfile%/*}"',
  // The new session's leader writes its own pid (= its group id), ends when a stop came first, and
  // becomes the step's command.
  'exec setsid -w sh -c \'echo $$ > "$0"; if [ -e "$1" ]; then rm -f "$0" "$1"; exit 143; fi; shift; exec "$@"\' "$pidfile" "$stopfile" "$@"',
].join('\n');

/** The lines that put `env` on the bootstrap's stdin (names that are not shell names are left out). */
export function environmentBlock(env: Record<string, string>): string {
  const lines = Object.entries(env).filter(([name]) => environmentName.test(name)).map(([name, value]) => `${name}=${Buffer.from(value, 'utf8').toString('base64')}`);
  return lines.join('\n') + '\n\n';
}

export interface RemoteRunOptions extends Pick<RunProcessOptions, 'stdin' | 'timeoutMs' | 'signal' | 'killGraceMs' | 'onLine' | 'onChunk' | 'outputLimit'> {
  /** The folder on the host the command runs in. */
  cwd: string;
  command: string;
  args: readonly string[];
  /** The step's environment on the host (sent on stdin, never on a command line). */
  env: Record<string, string>;
  /** The local environment ssh itself runs with (PATH, HOME, SSH_AUTH_SOCK are kept); default process.env. */
  localEnv?: Record<string, string>;
  /** Names this process on the host: its pid file is `<workDir>/.factory-pids/<key>.pgid`; start it with the run id. */
  key: string;
}

const keyPattern = /^run_[0-9a-z]+(?:[.-][A-Za-z0-9_-]+)*$/;

/**
 * Runs a command on the host with its output streamed back line by line, like runProcess (whose
 * result it gives). Cancel (`signal`) and timeout stop the whole remote process tree: SIGTERM to its
 * group through a second ssh, SIGKILL after `killGraceMs`; then the local ssh is stopped.
 */
export async function runRemote(runner: SshRunner, setup: SshSetup, options: RemoteRunOptions): Promise<ProcessResult> {
  if (!keyPattern.test(options.key)) throw new RangeError(`A remote process key must start with a run id, not ${quote(options.key)}`);
  const pidFile = `${remoteWorkDir(runner)}/.factory-pids/${options.key}.pgid`;
  // The stop's mark is this call's own: a retry under the same key never meets an old one.
  const stopFile = `${pidFile}.${randomBytes(6).toString('hex')}.stop`;
  const words = ['sh', '-c', remoteBootstrap, 'factory-step', options.cwd, pidFile, stopFile, options.command, ...options.args];
  const localEnv = sshClientEnvironment(options.localEnv ?? definedEntries(process.env));
  await ensureMaster(runner, setup, localEnv);
  const local = new AbortController();
  let cancelled = false;
  let timedOut = false;
  let finished = false;
  let stopping: Promise<void> | undefined;
  const stop = (): void => {
    stopping ??= stopRemoteGroup(runner, setup, pidFile, stopFile, options.killGraceMs ?? 5000, localEnv, () => finished).finally(() => local.abort());
  };
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (options.signal?.aborted) return { exitCode: null, signal: null, timedOut: false, cancelled: true, output: '', outputTruncated: false, durationMs: 0 };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs)
    ? setTimer(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs)
    : undefined;
  try {
    const result = await runProcess({
      command: setup.sshCommand ?? 'ssh', args: sshArguments(runner, setup, words.map(shellWord).join(' ')), cwd: '/', env: localEnv,
      stdin: environmentBlock({ ...options.env, FACTORY_REMOTE_KEY: options.key }) + (options.stdin ?? ''), signal: local.signal, killGraceMs: options.killGraceMs,
      onLine: options.onLine, onChunk: options.onChunk, outputLimit: options.outputLimit,
    });
    // A stop under way ends with the pid file removed: the result waits for it.
    await stopping;
    return { ...result, cancelled: cancelled || result.cancelled, timedOut };
  } finally {
    finished = true;
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Leaves the stop mark `stopFile` (a bootstrap that has not written its pid yet ends on it), then
 * SIGTERM to the group in `pidFile`, SIGKILL after the grace while it lives; both files go once the
 * group is stopped. Without a pid file the mark stays for the bootstrap to find and remove.
 */
async function stopRemoteGroup(runner: SshRunner, setup: SshSetup, pidFile: string, stopFile: string, graceMs: number, localEnv: Record<string, string>, over: () => boolean): Promise<void> {
  const graceSec = Math.max(1, Math.ceil(graceMs / 1000));
  const script = [
    `f=${shellWord(pidFile)}; s=${shellWord(stopFile)}`,
    'mkdir -p "${s%/*}" && : > "$s"',
    'pg=$(cat "$f" 2>/dev/null) || exit 0',
    'case $pg in ""|*[!0-9]*) exit 0;; esac',
    'kill -TERM "-$pg" 2>/dev/null || { rm -f "$f" "$s"; exit 0; }',
    `i=0; while kill -0 "-$pg" 2>/dev/null && [ $i -lt ${graceSec * 10} ]; do sleep 0.1; i=$((i+1)); done`,
    'kill -KILL "-$pg" 2>/dev/null; rm -f "$f" "$s"',
  ].join('\n');
  if (over()) return;
  await runProcess({ command: setup.sshCommand ?? 'ssh', args: sshArguments(runner, setup, `sh -c ${shellWord(script)}`), cwd: '/', env: localEnv, timeoutMs: graceMs + 20_000, killGraceMs: 1000 });
}

/**
 * Stops what runs on the host from pid files whose run is not in `liveRunIds` (processes a run left
 * when Factory was killed), and removes those pid files. A group is signalled only while its
 * leader still has the run's FACTORY_REMOTE_KEY in its environment: a reused pid is left alone.
 * Resolves with the keys of the groups stopped.
 */
export async function stopLeftoverProcesses(runner: SshRunner, setup: SshSetup, liveRunIds: readonly string[], options: { localEnv?: Record<string, string>; graceMs?: number } = {}): Promise<string[]> {
  const live = liveRunIds.filter((id) => /^run_[0-9a-z]+$/.test(id)).join(' ');
  const graceSec = Math.max(1, Math.ceil((options.graceMs ?? 5000) / 1000));
  const script = [
    `cd ${shellWord(remoteWorkDir(runner))}/.factory-pids 2>/dev/null || exit 0`,
    `live=${shellWord(live)}`,
    'for f in *.pgid; do',
    '  [ -f "$f" ] || continue',
    '  run=${f%%.*}; run=${run%%-*}',
    '  case " $live " in *" $run "*) continue;; esac',
    '  pg=$(cat "$f"); case $pg in ""|*[!0-9]*) rm -f "$f"; continue;; esac',
    // A leader still there must carry this key (its pid may have been reused); without one, the group's pgid cannot have been.
    '  if [ -r "/proc/$pg/environ" ] && ! tr "\\0" "\\n" < "/proc/$pg/environ" | grep -qx "FACTORY_REMOTE_KEY=${f%.pgid}"; then rm -f "$f"; continue; fi',
    '  if kill -0 "-$pg" 2>/dev/null; then',
    '    kill -TERM "-$pg" 2>/dev/null; echo "${f%.pgid}"',
    `    i=0; while kill -0 "-$pg" 2>/dev/null && [ $i -lt ${graceSec * 10} ]; do sleep 0.1; i=$((i+1)); done`,
    '    kill -KILL "-$pg" 2>/dev/null',
    '  fi',
    '  rm -f "$f"',
    'done',
    // Stop marks no bootstrap came to read (its ssh never reached the host) go with their run.
    'for s in *.stop; do',
    '  [ -f "$s" ] || continue',
    '  run=${s%%.*}; run=${run%%-*}',
    '  case " $live " in *" $run "*) continue;; esac',
    '  rm -f "$s"',
    'done',
  ].join('\n');
  await ensureMaster(runner, setup, options.localEnv);
  const result = await runProcess({
    command: setup.sshCommand ?? 'ssh', args: sshArguments(runner, setup, `sh -c ${shellWord(script)}`), cwd: '/',
    env: sshClientEnvironment(options.localEnv ?? definedEntries(process.env)), timeoutMs: 60_000, killGraceMs: 1000,
  });
  if (result.exitCode !== 0) throw new SshError(`Could not look for leftover processes on ${runner.host}: ssh ended with exit code ${result.exitCode ?? result.signal}`);
  return result.output.split('\n').filter(Boolean);
}

/**
 * Runs a short shell script on the host and resolves with its output; rejects with SshError in words
 * when the host cannot be reached, refuses the key, or its host key is unknown or changed.
 */
export async function runRemoteScript(runner: SshRunner, setup: SshSetup, script: string, options: { localEnv?: Record<string, string>; timeoutMs?: number } = {}): Promise<string> {
  const errors: string[] = [];
  await ensureMaster(runner, setup, options.localEnv);
  const result = await runProcess({
    command: setup.sshCommand ?? 'ssh', args: sshArguments(runner, setup, `sh -c ${shellWord(script)}`), cwd: '/',
    env: sshClientEnvironment(options.localEnv ?? definedEntries(process.env)), timeoutMs: options.timeoutMs ?? 30_000, killGraceMs: 1000,
    onLine: (line, stream) => { if (stream === 'err' && line.trim() && errors.length < 20) errors.push(line.trim()); },
  });
  if (result.spawnError) throw new SshError(`The ssh client could not start (${result.spawnError}): install it with \`apt-get install openssh-client\``);
  if (result.timedOut) throw new SshError(`${runner.host} did not answer within ${(options.timeoutMs ?? 30_000) / 1000} s`);
  if (result.exitCode === 255) throw new SshError(explainSshFailure(runner, errors));
  if (result.exitCode !== 0) throw new SshError(`The command on ${runner.host} failed (exit code ${result.exitCode ?? result.signal})${errors.length ? ': ' + errors.slice(-3).join(' ') : ''}`);
  return result.output;
}

/** ssh's stderr (exit code 255) in words a person can act on. */
export function explainSshFailure(runner: SshRunner, errors: readonly string[]): string {
  const text = errors.join('\n');
  const host = `${runner.host}${runner.port ? `:${runner.port}` : ''}`;
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i.test(text)) {
    return `The host key of ${host} has changed since it was recorded, so Factory did not connect (it may be another machine pretending to be it). If the machine was reinstalled, remove its old key with \`ssh-keygen -R ${runner.port ? `'[${runner.host}]:${runner.port}'` : runner.host}\` and connect once by hand`;
  }
  if (/Host key verification failed|No .* host key is known/i.test(text)) {
    return `The host key of ${host} is not known yet, and the runner checks keys strictly: connect once by hand (\`ssh ${runner.port ? `-p ${runner.port} ` : ''}${runner.host}\`) to check and record it, or set the runner's host keys to accept-new`;
  }
  if (/Permission denied/i.test(text)) return `${host} refused the login${runner.user ? ` as ${runner.user}` : ''}: add your public key to the host's ~/.ssh/authorized_keys, or choose the identity file the host knows`;
  if (/Connection refused/i.test(text)) return `${host} refused the connection: is the ssh server running there, on this port?`;
  if (/Could not resolve hostname/i.test(text)) return `The host name ${runner.host} could not be resolved: check its spelling`;
  if (/timed out/i.test(text)) return `${host} did not answer: check the address and that the machine is on`;
  return `ssh to ${host} failed${text ? `: ${errors.slice(-3).join(' ')}` : ''}`;
}

/** The version script's output from the host (engine/runners.ts testRunner). */
export async function sshVersions(runner: SshRunner, script: string, options: { env: Record<string, string>; timeoutMs: number; setup?: SshSetup }): Promise<string> {
  const setup = options.setup ?? { controlFolder: await ensureControlFolder() };
  return runRemoteScript(runner, setup, script, { localEnv: options.env, timeoutMs: options.timeoutMs });
}

// ───────────────────────────── Remote workspaces ─────────────────────────────

/** Where a project's clone and a run's worktree live on the host. */
export function remotePaths(runner: SshRunner, projectId: string, runId: string): { repository: string; worktree: string } {
  const workDir = remoteWorkDir(runner);
  return { repository: `${workDir}/repositories/${projectId}`, worktree: `${workDir}/worktrees/${runId}` };
}

export interface RemoteWorkspaceOptions {
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

/** The variables of `environment` that have a value. */
export function definedEntries(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
