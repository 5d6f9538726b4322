// The ssh runner against a real OpenSSH server the test starts on 127.0.0.1 (engine/ssh*.ts):
// streaming, the environment off every command line, cancel and timeout leaving no remote process,
// leftovers stopped after a restart, host keys, the work coming home, testRunner.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { HarnessDefinition } from '../../src/core/api';
import { testRunner } from '../../src/engine/runners';
import { ensureControlFolder, runRemoteScript, sshArguments, type SshSetup } from '../../src/engine/ssh';
import { stopLeftoverProcesses } from '../../src/engine/ssh-leftovers';
import { runRemote } from '../../src/engine/ssh-run';
import { bringWorkHome, prepareRemoteWorkspace, removeRemoteWorkspace } from '../../src/engine/ssh-workspace';
import { rejects } from '../helpers/assert';
import { alive, markedTree } from '../helpers/processes';
import { keygen, startSshd, sshdTools, stopSshd, type TestSshd } from '../helpers/sshd';
import { waitFor } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';

const ssh = suiteNeeding<TestSshd>('ssh', sshdTools);
const PATH = process.env.PATH ?? '/usr/bin:/bin';
const gitIdentity = { GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' };

ssh.before(async (context) => {
  Object.assign(context, await startSshd());
});

ssh.after((context) => stopSshd(context.dir ? context : undefined));

/** A remote command whose shells carry `marker` and whose sleeps are their children. */
const sleepers = (marker: string) => ['-c', `sh -c 'sleep 300; : ${marker}' & sh -c 'sleep 301; : ${marker}'; : ${marker}`];

ssh('a command runs in the remote workDir and its lines stream back as they come', async ({ runner, setup, workDir }) => {
  const lines: string[] = [];
  const go = join(workDir, 'go');
  const result = runRemote(runner, setup, {
    key: 'run_stream', cwd: workDir, command: 'sh', args: ['-c', 'pwd; echo one; while [ ! -f go ]; do sleep 0.05; done; echo two >&2; echo three'], env: { PATH },
    onLine: (line, stream) => {
      lines.push(`${stream}:${line}`);
      if (line === 'one') writeFileSync(go, ''); // only a streamed line can let the command finish
    },
  });
  const done = await result;
  assert.is(done.exitCode, 0);
  // stdout and stderr travel apart: their lines keep their order within each stream.
  assert.equal(lines.filter((line) => line.startsWith('out:')), [`out:${workDir}`, 'out:one', 'out:three']);
  assert.ok(lines.includes('err:two'));
});

ssh('the environment reaches the command whole, and no command line on either side holds a secret', async ({ runner, setup, workDir }) => {
  const secret = `sk-${Date.now()}-secret`;
  const marker = join(workDir, 'env-go');
  let seenOnCommandLines: number[] = [];
  const lines: string[] = [];
  const result = await runRemote(runner, setup, {
    key: 'run_env', cwd: workDir, command: 'sh', args: ['-c', 'printf "%s|" "$API_KEY"; printf "%s" "$MULTI" | od -c | head -n 2; echo; while [ ! -f env-go ]; do sleep 0.05; done'],
    env: { PATH, API_KEY: secret, MULTI: 'a\nb\n\n', 'BAD-NAME': 'x' },
    onLine: (line) => {
      lines.push(line);
      if (lines.length === 1) {
        // Every process on this machine (the local ssh, and sshd's side, since the host is this machine).
        seenOnCommandLines = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(secret);
          } catch {
            return false;
          }
        }).map(Number);
        writeFileSync(marker, '');
      }
    },
  });
  assert.is(result.exitCode, 0);
  assert.equal(seenOnCommandLines, []);
  assert.match(lines[0]!, `${secret}|`);
  assert.match(lines.join(' '), /a\s+\\n\s+b\s+\\n\s+\\n/);
});

ssh('cancel and timeout leave no remote process', async ({ runner, setup, workDir }) => {
  for (const how of ['cancel', 'timeout'] as const) {
    const marker = `factory-ssh-${how}-${process.pid}-${Date.now()}`;
    const controller = new AbortController();
    const started = runRemote(runner, setup, {
      key: `run_${how}`, cwd: workDir, command: 'sh', args: sleepers(marker), env: { PATH }, killGraceMs: 2000,
      signal: controller.signal, ...(how === 'timeout' ? { timeoutMs: 1500 } : {}),
    });
    let tree: number[] = [];
    await waitFor(() => (tree = markedTree(marker)).length >= 5, 10_000, 'the remote shells and sleeps');
    if (how === 'cancel') controller.abort();
    const result = await started;
    assert.is(how === 'cancel' ? result.cancelled : result.timedOut, true, how);
    await waitFor(() => !tree.some(alive), 10_000, `no remote process after ${how}`);
    assert.not.ok(existsSync(join(workDir, '.factory-pids', `run_${how}.pgid`)), 'the pid file is gone');
  }
});

ssh('a cancel that comes before the remote bootstrap wrote its pid file still leaves no remote process', async ({ dir, runner, setup, workDir }) => {
  // A setsid first on the remote PATH holds the bootstrap exactly there: started, no pid file yet.
  const hold = join(dir, 'hold');
  mkdirSync(hold, { recursive: true });
  const realSetsid = execFileSync('sh', ['-c', 'command -v setsid'], { encoding: 'utf8' }).trim();
  writeFileSync(join(hold, 'setsid'), `#!/bin/sh\n: > "$HOLD/reached"\nwhile [ ! -e "$HOLD/go" ]; do sleep 0.05; done\n${realSetsid} "$@"\necho $? > "$HOLD/done"\n`, { mode: 0o755 });
  const started = join(dir, 'command-started');
  const marker = `factory-ssh-early-${process.pid}-${Date.now()}`;
  const controller = new AbortController();
  const run = runRemote(runner, setup, {
    key: 'run_early', cwd: workDir, command: 'sh', args: ['-c', `: > ${started}; sleep 300; : ${marker}`], env: { PATH: `${hold}:${PATH}`, HOLD: hold },
    signal: controller.signal, killGraceMs: 1000,
  });
  try {
    await waitFor(() => existsSync(join(hold, 'reached')), 10_000, 'the bootstrap to reach setsid');
    assert.not.ok(existsSync(join(workDir, '.factory-pids', 'run_early.pgid')), 'no pid file yet');
    controller.abort();
    assert.is((await run).cancelled, true);
    writeFileSync(join(hold, 'go'), ''); // the bootstrap goes on after the cancel ended
    await waitFor(() => existsSync(join(hold, 'done')) || existsSync(started), 10_000, 'the held bootstrap to end');
    assert.not.ok(existsSync(started), 'the step\'s command never started');
    assert.is(readFileSync(join(hold, 'done'), 'utf8').trim(), '143');
    assert.equal(readdirSync(join(workDir, '.factory-pids')).filter((name) => name.startsWith('run_early')), [], 'no pid file or stop mark left');
  } finally {
    for (const pid of markedTree(marker)) process.kill(pid, 'SIGKILL');
  }
});

ssh('after Factory is killed, a restart stops the remote processes no live run owns', async ({ runner, setup, workDir }) => {
  const marker = `factory-ssh-orphan-${process.pid}-${Date.now()}`;
  const orphaned = runRemote(runner, setup, { key: 'run_orphan.build', cwd: workDir, command: 'sh', args: sleepers(marker), env: { PATH } });
  let tree: number[] = [];
  // Both sleeps must have started (the tree counts them once their shells forked them), not only the shells around them.
  const sleeping = (pids: number[]) => pids.filter((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\u000030'); } catch { return false; } }).length;
  await waitFor(() => sleeping(tree = markedTree(marker)) >= 2, 10_000, 'the remote shells and sleeps');
  // Factory dies: its local ssh is killed with it; the remote processes live on (no tty).
  for (const pid of markedTree('run_orphan.build.pgid')) {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('ssh')) process.kill(pid, 'SIGKILL');
  }
  await orphaned;
  const stillThere = tree.filter(alive);
  assert.ok(stillThere.length >= 4, 'the remote tree outlived the local ssh');
  assert.equal(await stopLeftoverProcesses(runner, setup, ['run_orphan']), [], 'a live run keeps its processes');
  assert.ok(tree.filter(alive).length >= 4);
  assert.equal(await stopLeftoverProcesses(runner, setup, [], { graceMs: 1000 }), ['run_orphan.build']);
  await waitFor(() => !tree.some(alive), 10_000, 'no leftover process');
});

ssh('a host key that changed fails in words with strict checking; accept-new records a new one', async ({ dir, runner }) => {
  const knownHosts = join(dir, 'known_hosts_strict');
  const hostLine = readFileSync(join(dir, 'host_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const otherKey = keygen(join(dir, 'other_host_key')).split(' ').slice(0, 2).join(' ');
  const name = `[127.0.0.1]:${runner.port}`;
  // A fresh socket folder each time: a master connection would skip the host key check.
  let count = 0;
  const fresh = async (file: string): Promise<SshSetup> => ({ controlFolder: await ensureControlFolder(join(dir, `c${count++}`)), knownHostsFile: file, configFile: '/dev/null', controlPersistSec: 30 });
  writeFileSync(knownHosts, `${name} ${otherKey}\n`);
  const strict = { ...runner, knownHosts: 'strict' as const };
  await rejects(runRemoteScript(strict, await fresh(knownHosts), 'true'), /host key of 127\.0\.0\.1:\d+ has changed.*ssh-keygen -R/s);
  writeFileSync(knownHosts, '');
  await rejects(runRemoteScript(strict, await fresh(knownHosts), 'true'), /host key of 127\.0\.0\.1:\d+ is not known yet.*accept-new/s);
  const recorded = join(dir, 'known_hosts_new');
  assert.is(await runRemoteScript({ ...runner, knownHosts: 'accept-new' }, await fresh(recorded), 'echo reached'), 'reached\n');
  assert.match(readFileSync(recorded, 'utf8'), name);
  assert.match(readFileSync(recorded, 'utf8'), hostLine.split(' ')[1]!);
  writeFileSync(knownHosts, `${name} ${otherKey}\n`);
  await rejects(runRemoteScript({ ...runner, knownHosts: 'accept-new' }, await fresh(knownHosts), 'true'), /has changed/);
});

ssh('the ssh arguments: batch mode, host keys, a private master socket, and the host after --', ({ runner, setup }) => {
  const args = sshArguments(runner, setup, 'true');
  const text = args.join(' ');
  for (const option of ['BatchMode=yes', 'StrictHostKeyChecking=yes', `UserKnownHostsFile=${setup.knownHostsFile}`, 'ControlMaster=no', `ControlPath=${setup.controlFolder}/%C`]) assert.match(text, option);
  assert.equal(args.slice(-3), ['--', '127.0.0.1', 'true']);
  assert.match(sshArguments({ ...runner, knownHosts: 'accept-new' }, setup, 'true').join(' '), 'StrictHostKeyChecking=accept-new');
  assert.match(sshArguments({ ...runner, knownHosts: undefined }, setup, 'true').join(' '), 'StrictHostKeyChecking=yes');
});

ssh('commits made in a remote worktree come back to the local repository', async ({ dir, runner, setup }) => {
  const env = { PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', ...gitIdentity };
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env }).toString().trim();
  const origin = join(dir, 'origin.git');
  git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
  const local = join(dir, 'local');
  git(dir, 'clone', '-q', origin, local);
  writeFileSync(join(local, 'README'), 'hello\n');
  git(local, 'add', '.');
  git(local, 'commit', '-q', '-m', 'first');
  git(local, 'push', '-q', 'origin', 'main');
  const worktree = await prepareRemoteWorkspace(runner, setup, { projectId: 'prj_0123456789abcdef', runId: 'run_home', remoteUrl: origin });
  assert.match(worktree, join(runner.workDir!, 'worktrees', 'run_home'));
  const step = await runRemote(runner, setup, {
    key: 'run_home.edit', cwd: worktree, command: 'sh', args: ['-c', 'echo change >> README && git commit -q -am "agent change" && echo left > leftover.txt'], env: { PATH, ...gitIdentity },
  });
  assert.is(step.exitCode, 0);
  await bringWorkHome(runner, setup, { projectId: 'prj_0123456789abcdef', runId: 'run_home', localRepository: local, title: 'Fix it', localEnv: env });
  assert.equal(git(local, 'log', '--format=%s', 'factory/run_home').split('\n'), ['Factory: uncommitted work of run_home (Fix it)', 'agent change', 'first']);
  assert.is(git(local, 'show', 'factory/run_home:leftover.txt'), 'left');
  await removeRemoteWorkspace(runner, setup, { projectId: 'prj_0123456789abcdef', runId: 'run_home' });
  assert.not.ok(existsSync(worktree), 'the remote worktree is gone');
});

ssh('testRunner for ssh reaches the host and reports git and each harness there', async ({ dir, runner, setup }) => {
  const harness = (id: string, command: string): HarnessDefinition => ({
    id, name: id, builtIn: false, enabled: true, command, args: [], promptVia: 'stdin', versionArgs: ['--version'], models: [], output: 'text', install: `npm install -g ${id}`,
  });
  const result = await testRunner({ name: 'Build host', kind: 'ssh', ...runner }, { harnesses: [harness('nodejs', 'node'), harness('ghost', 'factory-no-such-cli')], ssh: setup });
  assert.is(result.ok, true, result.error);
  assert.match(result.details!.git!, /^git version/);
  assert.match(result.details!.harnesses!.nodejs!, /^v\d+/);
  assert.match(result.details!.harnesses!.ghost!, 'not installed on 127.0.0.1: `factory-no-such-cli` was not found; install it there with `npm install -g ghost`');
  const refused = await testRunner({ name: 'Build host', kind: 'ssh', ...runner, identityFile: '/nonexistent/key' }, { harnesses: [], ssh: { ...setup, controlFolder: await ensureControlFolder(join(dir, 'c-refused')), controlPersistSec: 30 } });
  assert.is(refused.ok, false);
  assert.match(refused.error!, 'refused the login');
});

ssh.run();
