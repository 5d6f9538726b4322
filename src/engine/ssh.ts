// The ssh runner's connection (issue 25, PROVIDERS.md §10): steps run on another machine through the
// system's OpenSSH client, never a re-implementation. This file builds the ssh command line: every
// connection is non-interactive (BatchMode), checks the host's key (strict, or accept-new), and reuses
// one master connection per host (ControlMaster, its socket in a private folder). It runs short
// scripts on the host and says in words why ssh failed.
//
// The rest of the runner, by job: a step's remote process with its output streamed and its stop
// (ssh-run.ts), the remote workspace and the work coming home (ssh-workspace.ts), and the processes
// a killed Factory left on the host (ssh-leftovers.ts).

import { spawn } from 'node:child_process';
import { lstat, mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runner } from '../core/api';
import { FactoryError, quote } from '../core/errors';
import { defaultRemoteWorkDir } from '../core/runners';
import { runProcess } from './process';

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
function explainSshFailure(runner: SshRunner, errors: readonly string[]): string {
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

/** The variables of `environment` that have a value. */
export function definedEntries(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
