// Workspaces with real git repositories in temporary folders, and a small real CommandRunner.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Project } from '../../src/core/api';
import { newRunId } from '../../src/core/ids';
import { prepareWorkspace, worktreePath, type CommandRunner, type PrepareOptions } from '../../src/engine/workspace';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';

interface LoggedLine {
  line: string;
  stream: 'out' | 'err' | 'info';
}

interface Call {
  command: string;
  args: readonly string[];
  cwd: string;
}

interface Context {
  dir: string;
  env: Record<string, string>;
  repository: string;
  worktreesDir: string;
  logs: LoggedLine[];
  calls: Call[];
}

/** Spawns without a shell, in its own process group (killed whole on timeout or abort), line by line. */
const spawnRunner: CommandRunner = (options) =>
  new Promise((resolvePromise) => {
    let timedOut = false;
    let cancelled = false;
    const child = spawn(options.command, [...options.args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = options.timeoutMs ? setTimeout(() => ((timedOut = true), killGroup()), options.timeoutMs) : undefined;
    const onAbort = () => ((cancelled = true), killGroup());
    options.signal?.addEventListener('abort', onAbort);
    for (const stream of ['out', 'err'] as const) {
      let pending = '';
      const source = stream === 'out' ? child.stdout : child.stderr;
      source.setEncoding('utf8');
      source.on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop()!;
        for (const line of lines) options.onLine?.(line, stream);
      });
      source.on('end', () => pending && options.onLine?.(pending, stream));
    }
    const finish = (exitCode: number | null, spawnError?: string) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolvePromise({ exitCode, timedOut, cancelled, ...(spawnError ? { spawnError } : {}) });
    };
    child.on('error', (error) => finish(null, error.message));
    child.on('close', (code) => finish(code));
  });

const workspace = suite<Context>('workspace');

workspace.before.each((context) => {
  context.dir = realpathSync(makeTempDir('factory-workspace'));
  context.env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: context.dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Factory Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Factory Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
  context.repository = join(context.dir, 'repo');
  context.worktreesDir = join(context.dir, 'data', 'worktrees');
  context.logs = [];
  context.calls = [];
});

workspace.after.each((context) => {
  removeTempDir(context.dir);
});

function git(context: Context, cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: context.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A repository with one commit holding README.md. */
function makeRepository(context: Context, path = context.repository): string {
  mkdirSync(path, { recursive: true });
  git(context, path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, 'README.md'), 'hello\n');
  git(context, path, 'add', 'README.md');
  git(context, path, 'commit', '-q', '-m', 'first');
  return path;
}

function project(path: string, fields: Partial<Project> = {}): Project {
  return { id: 'prj_0123456789abcdef', name: 'Test', path, worktrees: true, ...fields };
}

function options(context: Context, projectValue: Project, fields: Partial<PrepareOptions> = {}): PrepareOptions {
  return {
    project: projectValue,
    runId: newRunId(),
    worktreesDir: context.worktreesDir,
    env: context.env,
    run: (call) => (context.calls.push({ command: call.command, args: call.args, cwd: call.cwd }), spawnRunner(call)),
    log: (line, stream) => context.logs.push({ line, stream }),
    ...fields,
  };
}

function logText(context: Context, stream?: LoggedLine['stream']): string[] {
  return context.logs.filter((entry) => !stream || entry.stream === stream).map((entry) => entry.line);
}

workspace('creates a worktree on the branch factory/<runId> holding the committed files', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository));
  const folder = await prepareWorkspace(prepare);
  assert.is(folder, join(context.worktreesDir, prepare.runId));
  assert.is(readFileSync(join(folder, 'README.md'), 'utf8'), 'hello\n');
  assert.is(git(context, folder, 'rev-parse', '--abbrev-ref', 'HEAD'), `factory/${prepare.runId}`);
  assert.is(git(context, context.repository, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the project stays on its branch');
  const info = logText(context, 'info');
  assert.ok(info.includes(`$ git worktree add -b factory/${prepare.runId} ${folder} HEAD`), info.join('\n'));
  assert.match(info.at(-1)!, /^Setup finished in (\d+ ms|\d+\.\d s)$/);
});

workspace('runs the setup command in the worktree and sends its output to the setup log', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository, { setupCommand: 'pwd; echo installed > marker.txt; echo "a warning" >&2' }));
  const folder = await prepareWorkspace(prepare);
  assert.ok(existsSync(join(folder, 'marker.txt')), 'the setup command ran in the worktree');
  assert.not.ok(existsSync(join(context.repository, 'marker.txt')), 'and not in the project folder');
  assert.ok(logText(context, 'info').includes('$ pwd; echo installed > marker.txt; echo "a warning" >&2'));
  assert.ok(logText(context, 'out').includes(folder));
  assert.ok(logText(context, 'err').includes('a warning'));
});

workspace('a failing setup command throws with its exit code and last error line', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository, { setupCommand: 'echo first >&2; echo "npm: no such package" >&2; exit 2' }));
  const error = await rejects(prepareWorkspace(prepare), /setup command failed \(exit 2\): npm: no such package/);
  assert.is(error.name, 'WorkspaceError');
  assert.match(logText(context, 'info').at(-1)!, /^Setup failed: .*exit 2/);
});

workspace('a setup command that runs too long is stopped and reported as timed out', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository, { setupCommand: 'sleep 20' }), { setupTimeoutMs: 200 });
  await rejects(prepareWorkspace(prepare), /setup command timed out after 200 ms/);
});

workspace('cancelling during setup throws Setup cancelled', async (context) => {
  makeRepository(context);
  const controller = new AbortController();
  const prepare = options(context, project(context.repository, { setupCommand: 'echo started; sleep 20' }), { signal: controller.signal });
  const log = prepare.log;
  prepare.log = (line, stream) => (log(line, stream), line === 'started' && controller.abort());
  await rejects(prepareWorkspace(prepare), /^Setup cancelled$/);
});

workspace('a project folder that is not a git repository fails when worktrees are on', async (context) => {
  mkdirSync(context.repository);
  const prepare = options(context, project(context.repository));
  await rejects(prepareWorkspace(prepare), /is not a git repository \(exit 128\): fatal: not a git repository/);
  assert.not.ok(existsSync(worktreePath(context.worktreesDir, prepare.runId)));
});

workspace('a missing project folder fails and names the folder', async (context) => {
  const missing = join(context.dir, 'gone');
  await rejects(prepareWorkspace(options(context, project(missing))), /Project folder `.*gone` does not exist/);
  await rejects(prepareWorkspace(options(context, project(missing, { worktrees: false }))), /does not exist/);
});

workspace('a repository without commits fails with a clear reason', async (context) => {
  mkdirSync(context.repository);
  git(context, context.repository, 'init', '-q', '-b', 'main');
  await rejects(prepareWorkspace(options(context, project(context.repository))), /has no commits yet/);
});

workspace('without worktrees the workspace is the project folder and setup runs there', async (context) => {
  mkdirSync(context.repository);
  const prepare = options(context, project(context.repository, { worktrees: false, setupCommand: 'echo ok > marker.txt' }));
  assert.is(await prepareWorkspace(prepare), context.repository);
  assert.is(readFileSync(join(context.repository, 'marker.txt'), 'utf8'), 'ok\n');
  assert.not.ok(existsSync(context.worktreesDir), 'no worktree folder was made');
  assert.equal(context.calls.map((call) => call.command), ['/bin/sh'], 'git was not run');
  assert.match(logText(context, 'info').at(-1)!, /^Setup finished in/);
});

workspace('a project folder used as it is needs no setup and leaves the setup log empty', async (context) => {
  mkdirSync(context.repository);
  assert.is(await prepareWorkspace(options(context, project(context.repository, { worktrees: false }))), context.repository);
  assert.equal(context.calls, []);
  assert.equal(context.logs, []);
});

workspace('preparing the same run again reuses its worktree and keeps the work in it', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository));
  const folder = await prepareWorkspace(prepare);
  writeFileSync(join(folder, 'work.txt'), 'in progress\n');
  assert.is(await prepareWorkspace(prepare), folder);
  assert.is(readFileSync(join(folder, 'work.txt'), 'utf8'), 'in progress\n');
  assert.ok(logText(context, 'info').includes(`Reusing the worktree ${folder}`));
});

workspace('a worktree folder deleted by hand is recreated from the run branch', async (context) => {
  makeRepository(context);
  const prepare = options(context, project(context.repository));
  const folder = await prepareWorkspace(prepare);
  writeFileSync(join(folder, 'work.txt'), 'committed on the branch\n');
  git(context, folder, 'add', 'work.txt');
  git(context, folder, 'commit', '-q', '-m', 'work');
  rmSync(folder, { recursive: true, force: true });
  assert.is(await prepareWorkspace(prepare), folder);
  assert.is(readFileSync(join(folder, 'work.txt'), 'utf8'), 'committed on the branch\n');
  assert.is(git(context, folder, 'rev-parse', '--abbrev-ref', 'HEAD'), `factory/${prepare.runId}`);
});

workspace('a project in a subfolder of its repository works in the same subfolder of the worktree', async (context) => {
  makeRepository(context);
  mkdirSync(join(context.repository, 'packages', 'app'), { recursive: true });
  writeFileSync(join(context.repository, 'packages', 'app', 'index.js'), '1\n');
  git(context, context.repository, 'add', '.');
  git(context, context.repository, 'commit', '-q', '-m', 'app');
  const prepare = options(context, project(join(context.repository, 'packages', 'app'), { setupCommand: 'ls' }));
  const folder = await prepareWorkspace(prepare);
  assert.is(folder, join(worktreePath(context.worktreesDir, prepare.runId), 'packages', 'app'));
  assert.ok(logText(context, 'out').includes('index.js'));
});

workspace('paths with spaces and quotes reach git as single arguments, never through a shell', async (context) => {
  const repository = makeRepository(context, join(context.dir, `my project's "repo" $HOME`));
  context.worktreesDir = join(context.dir, 'data dir', 'worktrees');
  const prepare = options(context, project(repository, { setupCommand: 'pwd' }));
  const folder = await prepareWorkspace(prepare);
  assert.is(readFileSync(join(folder, 'README.md'), 'utf8'), 'hello\n');
  assert.ok(logText(context, 'out').includes(folder));
  const add = context.calls.find((call) => call.args.includes('add'))!;
  assert.is(add.command, 'git');
  assert.equal(add.args, ['-C', repository, 'worktree', 'add', '-b', `factory/${prepare.runId}`, folder, 'HEAD']);
  assert.ok(logText(context, 'info').includes(`$ git worktree add -b factory/${prepare.runId} '${folder}' HEAD`));
});

workspace('a run id that is not safe in a path is refused', async (context) => {
  makeRepository(context);
  assert.throws(() => worktreePath(context.worktreesDir, '../escape'), /Invalid run id `\.\.\/escape`/);
  await rejects(prepareWorkspace(options(context, project(context.repository), { runId: 'run_x; rm -rf ~' })), /Invalid run id/);
  assert.is(context.calls.filter((call) => call.args.includes('add')).length, 0);
});

workspace.run();
