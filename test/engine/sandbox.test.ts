// The sandbox runner with the real bubblewrap: what a sandboxed step can and cannot see, write and
// reach (engine/sandbox.ts; docs/SECURITY.md "Sandboxed steps").
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { Runner } from '../../src/core/api';
import { runProcess } from '../../src/engine/process';
import { SandboxUnavailableError, checkBubblewrap, findBubblewrap, sandboxArguments, sandboxCommand, type SandboxCommandOptions } from '../../src/engine/sandbox';
import { rejects } from '../helpers/assert';
import { alive, markedTree } from '../helpers/processes';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';

const bubblewrap = { command: 'bwrap', package: 'bubblewrap' };
const gitTool = { command: 'git', package: 'git' };

interface Context {
  dir: string;
  home: string;
  data: string;
  workspace: string;
}

const sandbox = suiteNeeding<Context>('sandbox', [bubblewrap, gitTool]);
const open: Runner = { id: 'rnr_0000000000000001', name: 'Sandbox', kind: 'sandbox' };
const closed: Runner = { ...open, network: false };
const PATH = '/usr/local/bin:/usr/bin:/bin';

sandbox.before.each((context) => {
  context.dir = makeTempDir('factory-sandbox');
  // A home folder with the secrets an issue's text might steer an agent to, and a harness's own folder.
  context.home = join(context.dir, 'home');
  mkdirSync(join(context.home, '.ssh'), { recursive: true });
  writeFileSync(join(context.home, '.ssh', 'id_test'), 'PRIVATE KEY SECRET\n');
  mkdirSync(join(context.home, '.aws'), { recursive: true });
  writeFileSync(join(context.home, '.aws', 'credentials'), 'AWS SECRET\n');
  mkdirSync(join(context.home, '.claude'), { recursive: true });
  writeFileSync(join(context.home, '.claude', 'settings.json'), '{"harness":"state"}\n');
  // A data folder with a configuration, this run's worktree and another run's.
  context.data = join(context.dir, 'data');
  context.workspace = join(context.data, 'worktrees', 'run_this');
  mkdirSync(context.workspace, { recursive: true });
  mkdirSync(join(context.data, 'worktrees', 'run_other'), { recursive: true });
  writeFileSync(join(context.data, 'worktrees', 'run_other', 'notes.txt'), 'OTHER RUN\n');
  writeFileSync(join(context.data, 'config.json'), '{"token":"DATA SECRET"}\n');
});

sandbox.after.each((context) => removeTempDir(context.dir));

/** Runs `script` with /bin/sh inside the sandbox, as a step would be run. */
async function inSandbox(context: Context, runner: Runner, script: string, extra: Partial<SandboxCommandOptions> = {}) {
  const wrapped = await sandboxCommand(runner, {
    workspace: context.workspace, harnessPaths: ['~/.claude'], env: { PATH, LANG: 'C.UTF-8' }, home: context.home,
    command: '/bin/sh', args: ['-c', script], ...extra,
  });
  const lines: string[] = [];
  const result = await runProcess({ command: wrapped.command, args: wrapped.args, env: wrapped.env, cwd: context.workspace, useCgroup: false, timeoutMs: 60_000, onLine: (line) => lines.push(line) });
  return { ...result, text: lines.join('\n') };
}

sandbox('a planted secret in the home folder cannot be read; the harness folder can', async (context) => {
  const ssh = await inSandbox(context, open, 'cat ~/.ssh/id_test');
  assert.is.not(ssh.exitCode, 0);
  assert.not.match(ssh.text, 'SECRET');
  const aws = await inSandbox(context, open, `cat ${join(context.home, '.aws', 'credentials')}`);
  assert.is.not(aws.exitCode, 0);
  assert.not.match(aws.text, 'SECRET');
  const harness = await inSandbox(context, open, 'cat ~/.claude/settings.json && echo "$HOME"');
  assert.is(harness.exitCode, 0, harness.text);
  assert.match(harness.text, '{"harness":"state"}');
  assert.match(harness.text, context.home);
});

sandbox('writing outside the workspace fails; inside it works', async (context) => {
  const outside = join(context.dir, 'outside.txt');
  const system = `/usr/factory-sandbox-${process.pid}-${Date.now()}`;
  try {
    const result = await inSandbox(context, open, `echo inside > result.txt && echo out > ${outside}; echo x > ${system}; echo x > ${join(context.data, 'injected')}; exit 0`);
    assert.is(result.exitCode, 0, result.text);
    assert.is(readFileSync(join(context.workspace, 'result.txt'), 'utf8'), 'inside\n');
    assert.not.ok(existsSync(outside), 'nothing written beside the workspace');
    assert.not.ok(existsSync(system), 'nothing written into the system');
    assert.not.ok(existsSync(join(context.data, 'injected')), 'nothing written into the data folder');
  } finally {
    removeTempDir(system);
  }
});

sandbox('the data folder and other runs\' workspaces are invisible', async (context) => {
  const result = await inSandbox(context, open, `cat ${join(context.data, 'config.json')}; cat ${join(context.data, 'worktrees', 'run_other', 'notes.txt')}`);
  assert.not.match(result.text, 'DATA SECRET');
  assert.not.match(result.text, 'OTHER RUN');
  const listing = await inSandbox(context, open, `ls ${join(context.data, 'worktrees')}; ls ${context.data}`);
  assert.is(listing.text, 'run_this\nworktrees');
});

sandbox('/tmp is private: the host\'s files are not there, and what the step writes stays inside', async (context) => {
  const hostFile = join('/tmp', `factory-sandbox-host-${process.pid}-${Date.now()}`);
  writeFileSync(hostFile, 'HOST TMP\n');
  const written = `/tmp/factory-sandbox-step-${process.pid}-${Date.now()}`;
  try {
    const result = await inSandbox(context, open, `cat ${hostFile}; echo step > ${written} && cat ${written}`);
    assert.not.match(result.text, 'HOST TMP');
    assert.match(result.text, 'step');
    assert.not.ok(existsSync(written), 'the step\'s /tmp file is not on the host');
  } finally {
    removeTempDir(hostFile);
  }
});

sandbox('/etc holds only what programs need (no shadow, ssh or private keys), and a step keeps no capabilities', async (context) => {
  const guarded = ['/etc/shadow', '/etc/gshadow', '/etc/ssh', '/etc/ssl/private', '/etc/sudoers'].filter((path) => existsSync(path));
  const result = await inSandbox(context, open, `for p in /etc/passwd ${guarded.join(' ')}; do [ -e "$p" ] && echo "seen $p"; done; grep '^CapEff:' /proc/self/status`);
  assert.match(result.text, 'seen /etc/passwd');
  for (const path of guarded) assert.not.match(result.text, `seen ${path}`);
  assert.match(result.text, /^CapEff:\s+0+$/m, 'no capability left, even for root');
});

sandbox('network false cannot reach a server on 127.0.0.1; network true can', async (context) => {
  const server: Server = createServer((_request, response) => response.end('reached\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  try {
    const script = `curl -s --max-time 10 http://127.0.0.1:${port}/ || node -e "fetch('http://127.0.0.1:${port}/').then(r => r.text()).then(t => process.stdout.write(t), () => process.exit(7))"`;
    const offline = await inSandbox(context, closed, script);
    assert.is.not(offline.exitCode, 0, offline.text);
    assert.not.match(offline.text, 'reached');
    const online = await inSandbox(context, open, script);
    assert.is(online.exitCode, 0, online.text);
    assert.match(online.text, 'reached');
  } finally {
    await new Promise((done) => server.close(done));
  }
});

sandbox('its processes die with bwrap, even those in the background', async (context) => {
  const marker = `factory-sandbox-marker-${process.pid}-${Date.now()}`;
  const wrapped = await sandboxCommand(open, {
    workspace: context.workspace, env: { PATH }, home: context.home,
    command: '/bin/sh', args: ['-c', `sh -c 'sleep 300; : ${marker}' & sh -c 'sleep 301; : ${marker}'`],
  });
  const child = spawn(wrapped.command, wrapped.args, { env: wrapped.env, stdio: 'ignore' });
  let seen: number[] = [];
  await waitFor(() => (seen = markedTree(marker)).length >= 4, 10_000, 'two marked shells and their sleeps');
  child.kill('SIGKILL');
  try {
    await waitFor(() => !seen.some(alive), 10_000, 'every sandboxed process gone');
  } finally {
    for (const pid of seen) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  }
});

sandbox('a step commits in its worktree, but cannot change the hooks, the config or where the repository is', async (context) => {
  const repository = join(context.dir, 'project');
  mkdirSync(repository);
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { PATH, HOME: context.home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' } }).toString();
  git(repository, 'init', '-q', '-b', 'main');
  writeFileSync(join(repository, 'a.txt'), 'a\n');
  git(repository, 'add', '.');
  git(repository, 'commit', '-q', '-m', 'first');
  removeTempDir(context.workspace);
  git(repository, 'worktree', 'add', '-q', '-b', 'factory/run_this', context.workspace);
  const admin = join(repository, '.git', 'worktrees', 'run_this');
  const commondirBefore = readFileSync(join(admin, 'commondir'), 'utf8');
  const script = [
    'export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@e',
    'echo b > b.txt && git add b.txt && git commit -q -m second && echo COMMITTED',
    `echo 'touch /tmp/pwned' > ${join(repository, '.git', 'hooks', 'post-commit')} || echo HOOK-REFUSED`,
    `git config core.hooksPath /tmp || echo CONFIG-REFUSED`,
    `echo /tmp > ${join(admin, 'commondir')} || echo COMMONDIR-REFUSED`,
    `echo 'gitdir: /tmp' > .git || echo DOTGIT-REFUSED`,
  ].join('\n');
  const result = await inSandbox(context, open, script);
  for (const word of ['COMMITTED', 'HOOK-REFUSED', 'CONFIG-REFUSED', 'COMMONDIR-REFUSED', 'DOTGIT-REFUSED']) assert.match(result.text, word, result.text);
  assert.match(git(repository, 'log', '--format=%s', 'factory/run_this'), 'second');
  assert.not.ok(existsSync(join(repository, '.git', 'hooks', 'post-commit')));
  assert.is(readFileSync(join(admin, 'commondir'), 'utf8'), commondirBefore);
  assert.match(readFileSync(join(context.workspace, '.git'), 'utf8'), 'gitdir:');
});

sandbox('the arguments: system read-only, no home, no /etc whole, --unshare-net only without network', () => {
  const layout = {
    network: false, workspace: '/w', home: '/home/me',
    system: [{ path: '/usr', what: { kind: 'folder' as const } }, { path: '/bin', what: { kind: 'symlink' as const, target: 'usr/bin' } }],
    writable: ['/home/me/.claude'], readOnly: [], git: { readOnly: [], writable: [], pinned: [] }, command: 'claude', args: ['-p'],
  };
  const args = sandboxArguments(layout);
  const text = args.join(' ');
  assert.match(text, '--ro-bind /usr /usr');
  assert.match(text, '--symlink usr/bin /bin');
  assert.match(text, '--tmpfs /home/me');
  assert.match(text, '--bind-try /home/me/.claude /home/me/.claude');
  assert.match(text, '--bind /w /w');
  for (const flag of ['--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session']) assert.ok(args.includes(flag), flag);
  assert.not.match(text, '--ro-bind /etc /etc');
  assert.not.match(text, '--bind /home/me /home/me');
  assert.equal(args.slice(-3), ['--', 'claude', '-p']);
  assert.not.ok(sandboxArguments({ ...layout, network: true }).includes('--unshare-net'));
});

sandbox('the environment goes through bwrap\'s environment, never its command line', async (context) => {
  const wrapped = await sandboxCommand(open, { workspace: context.workspace, env: { PATH, API_KEY: 'sk-secret-value' }, home: context.home, command: '/bin/sh', args: ['-c', 'echo "$API_KEY"'] });
  assert.not.ok(wrapped.args.some((arg) => arg.includes('sk-secret-value')));
  const result = await runProcess({ command: wrapped.command, args: wrapped.args, env: wrapped.env, cwd: context.workspace, useCgroup: false });
  assert.is(result.output.trim(), 'sk-secret-value');
});

sandbox('a missing bwrap, or one the kernel refuses, fails in words naming the package', async (context) => {
  const missing = await rejects(findBubblewrap(context.dir, []), /apt-get install bubblewrap/);
  assert.instance(missing, SandboxUnavailableError);
  const refusing = join(context.dir, 'bwrap');
  writeFileSync(refusing, '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n');
  chmodSync(refusing, 0o755);
  const refused = await rejects(checkBubblewrap(refusing), /user namespaces.*README\.Debian/);
  assert.instance(refused, SandboxUnavailableError);
  const wrapped = await rejects(sandboxCommand(open, { workspace: context.workspace, env: { PATH }, command: 'true', args: [], bwrapPath: refusing }), /cannot start/);
  assert.instance(wrapped, SandboxUnavailableError);
});

sandbox.run();
