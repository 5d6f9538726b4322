// A step's process on an ssh runner's host (issue 25, PROVIDERS.md §10), its output streamed back.
//
// A remote step runs as `sh -c <bootstrap>` whose fixed text does, on the host: cd to the step's
// folder, read the environment from the first lines of stdin (NAME=base64, ended by an empty line),
// write its process group id to a pid file under the work folder, and exec the step's command in a
// session of its own (`setsid -w`), which then reads the rest of stdin. So no value of the
// environment is ever on a command line (ours, or the host's), and cancel or timeout stops the
// whole remote tree: `kill -TERM -<pgid>`, then KILL after the grace. Without a tty the remote
// processes would outlive the local ssh (PROVIDERS.md §10), so that kill is what stops them. After a
// restart, stopLeftoverProcesses (ssh-leftovers.ts) stops what runs from pid files no live run owns.

import { randomBytes } from 'node:crypto';
import { quote } from '../core/errors';
import { setTimer } from '../core/timers';
import { runProcess, type ProcessResult, type RunProcessOptions } from './process';
import {
  definedEntries, ensureMaster, remoteWorkDir, shellWord, sshArguments, sshClientEnvironment, type SshRunner, type SshSetup,
} from './ssh';

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
const remoteBootstrap = [
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
function environmentBlock(env: Record<string, string>): string {
  const lines = Object.entries(env).filter(([name]) => environmentName.test(name)).map(([name, value]) => `${name}=${Buffer.from(value, 'utf8').toString('base64')}`);
  return lines.join('\n') + '\n\n';
}

interface RemoteRunOptions extends Pick<RunProcessOptions, 'stdin' | 'timeoutMs' | 'signal' | 'killGraceMs' | 'onLine' | 'onChunk' | 'outputLimit'> {
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
