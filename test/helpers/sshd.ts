// A real OpenSSH server on 127.0.0.1 for tests (issue 25): a host key and a user key made here,
// the host's key known beforehand (as a user has it after checking it once), a private folder for
// master connections. `stopSshd` stops the server and the masters, and removes the folder.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { ensureControlFolder, type SshRunner, type SshSetup } from '../../src/engine/ssh';
import { freePort } from './net';
import { makeTempDir, removeTempDir, waitFor } from './temp';

/** The tools an sshd test needs, for suiteNeeding. */
export const sshdTools = [
  { command: '/usr/sbin/sshd', package: 'openssh-server' }, { command: 'ssh', package: 'openssh-client' },
  { command: 'ssh-keygen', package: 'openssh-client' }, { command: 'git', package: 'git' },
];

export interface TestSshd {
  dir: string;
  sshd: ChildProcess;
  /** Host, port, user, identity file, strict host keys, workDir: what a Runner of kind ssh holds. */
  runner: SshRunner & { host: string; port: number; workDir: string };
  setup: SshSetup;
  workDir: string;
}

/** Makes an ed25519 key pair at `path` (no passphrase) and returns its public line. */
export function keygen(path: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path]);
  return readFileSync(`${path}.pub`, 'utf8').trim();
}

/** Starts sshd on a free port of 127.0.0.1 and resolves once it listens. */
export async function startSshd(): Promise<TestSshd> {
  const dir = makeTempDir('factory-ssh');
  const port = await freePort();
  keygen(join(dir, 'host_key'));
  const userKey = keygen(join(dir, 'user_key'));
  writeFileSync(join(dir, 'authorized_keys'), userKey + '\n', { mode: 0o600 });
  writeFileSync(join(dir, 'sshd_config'), [
    `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${join(dir, 'host_key')}`, `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    `PidFile ${join(dir, 'sshd.pid')}`, 'UsePAM no', 'StrictModes no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PermitRootLogin prohibit-password',
  ].join('\n') + '\n');
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation folder
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  sshd.stderr!.on('data', (chunk) => (log += chunk));
  await waitFor(() => /Server listening on 127\.0\.0\.1/.test(log) || sshd.exitCode !== null, 10_000, 'sshd to listen');
  if (sshd.exitCode !== null) throw new Error(`sshd did not start: ${log}`);
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${readFileSync(join(dir, 'host_key.pub'), 'utf8').trim()}\n`);
  return {
    dir, sshd, workDir,
    runner: { host: '127.0.0.1', port, user: userInfo().username, identityFile: join(dir, 'user_key'), knownHosts: 'strict', workDir },
    setup: { controlFolder: await ensureControlFolder(join(dir, 'c')), knownHostsFile: join(dir, 'known_hosts'), configFile: '/dev/null', controlPersistSec: 30 },
  };
}

/** Stops the server and every master connection made under its folder, and removes the folder. */
export function stopSshd(server: TestSshd | undefined): void {
  if (!server) return;
  server.sshd?.kill('SIGKILL');
  const sockets = readdirSync(server.dir).filter((name) => /^c/.test(name)).flatMap((folder) => readdirSync(join(server.dir, folder)).map((socket) => join(server.dir, folder, socket)));
  for (const socket of sockets) {
    try {
      execFileSync('ssh', ['-o', `ControlPath=${socket}`, '-O', 'exit', 'x'], { stdio: 'ignore', timeout: 5000 });
    } catch {
      // already gone
    }
  }
  removeTempDir(server.dir);
}
