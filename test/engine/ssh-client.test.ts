// The local side of the ssh runner without a server (engine/ssh.ts): which key ssh may offer, what
// the local ssh process is given, where its master sockets live, and how a step's words reach the
// host's shell (docs/SECURITY.md "Sandboxed steps and ssh runners"). The server side is ssh.test.ts.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureControlFolder, shellWord, sshClientEnvironment, sshOptions } from '../../src/engine/ssh';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const client = suite('ssh client');
const setup = { controlFolder: '/tmp/factory-ssh-test' };

client('an identity file is the only key ssh offers; without one, the user’s ssh config and agent choose', () => {
  const withKey = sshOptions({ host: 'build.example.com', identityFile: '/home/me/.ssh/id_build' }, setup);
  const at = withKey.indexOf('-i');
  assert.equal(withKey.slice(at, at + 4), ['-i', '/home/me/.ssh/id_build', '-o', 'IdentitiesOnly=yes']);
  const withoutKey = sshOptions({ host: 'build.example.com' }, setup);
  assert.not.ok(withoutKey.includes('-i'));
  assert.not.ok(withoutKey.includes('IdentitiesOnly=yes'));
});

client('the local ssh gets what finds keys and agents, and nothing of the step or of Factory', () => {
  const environment = sshClientEnvironment({
    PATH: '/usr/bin', HOME: '/home/me', USER: 'me', LOGNAME: 'me', LANG: 'C.UTF-8', SSH_AUTH_SOCK: '/run/agent.sock',
    ANTHROPIC_API_KEY: 'sk-secret', GITHUB_TOKEN: 'ghp_secret', FACTORY_RUN_ID: 'run_1', FACTORY_PROCESS_MARKER: 'marker', SSH_ASKPASS: '/usr/bin/askpass',
  });
  assert.equal(environment, { PATH: '/usr/bin', HOME: '/home/me', USER: 'me', LOGNAME: 'me', LANG: 'C.UTF-8', SSH_AUTH_SOCK: '/run/agent.sock' });
});

client('master sockets live in a folder of this user that nobody else can open', async () => {
  const dir = makeTempDir('factory-ssh-client');
  try {
    const made = await ensureControlFolder(join(dir, 'made'));
    assert.is(execFileSync('stat', ['-c', '%a', made]).toString().trim(), '700');
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o755);
    await rejects(ensureControlFolder(shared), /must be a private folder of this user \(mode 0700\)/);
  } finally {
    removeTempDir(dir);
  }
});

client('each word of a step reaches the host’s shell as it is: quotes, $(…), globs and new lines stay data', () => {
  const words = ["it's", '$(touch pwned)', '`id`', '*', 'a b', 'line one\nline two', '"; exit 3; "', '--flag=$HOME', ''];
  const dir = makeTempDir('factory-ssh-words');
  try {
    // As the host's shell reads a remote command line: one string, parsed once by sh.
    const commandLine = `printf '%s\\0' ${words.map(shellWord).join(' ')}`;
    const printed = execFileSync('sh', ['-c', commandLine], { cwd: dir }).toString();
    assert.equal(printed.split('\0').slice(0, -1), words);
    assert.equal(execFileSync('ls', ['-A', dir]).toString(), '', 'nothing ran');
  } finally {
    removeTempDir(dir);
  }
});

client.run();
