// Agent sessions and resume (issue 23.4): each CLI's session id is read from its own output and
// recorded on the step as soon as it is seen; a follow-up run's agent step resumes the session of
// the run that last worked on its branch (Claude Code's transcript carried to the new worktree's
// project folder), else starts fresh with that run's summary. The fake Claude (FAKE_SESSIONS=1)
// keeps sessions by folder as the real CLI does and says "No conversation found" for any other.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, HarnessDefinition, Run, RunFollowUp, StepRun } from '../../src/core/api';
import { findBuiltInHarness } from '../../src/harness/builtins';
import { carryClaudeTranscript, claudeProjectFolder } from '../../src/harness/claude-sessions';
import { buildInvocation } from '../../src/harness/invocation';
import { createParser } from '../../src/harness/parsers/index';
import { earlierRunsOnBranch } from '../../src/engine/follow-up-session';
import { rejects } from '../helpers/assert';
import { startTestFactory, type TestFactory } from '../helpers/factory';
import { waitFor } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;

// ─── Session ids from each CLI's output ───

const sessions = suite('session ids');

/** The session id a parser reports after these lines (objects as JSON lines), and after each line. */
function sessionAfter(format: string, events: object[]): { seen: (string | undefined)[]; final: string | undefined } {
  const parser = createParser(format);
  const seen = events.map((event) => {
    parser.push(JSON.stringify(event));
    return parser.sessionId();
  });
  parser.finish();
  return { seen, final: parser.sessionId() };
}

sessions('Claude Code: the init line names the session at once; the result line keeps it', () => {
  const id = '3f1c2a9e-0b7d-4c55-9a1e-2d8f6b7c9e01';
  const { seen } = sessionAfter('claude-stream-json', [
    { type: 'system', subtype: 'init', session_id: id, cwd: '/repo', model: 'claude-sonnet-4-5', tools: [] },
    { type: 'assistant', session_id: id, message: { id: 'msg_1', role: 'assistant', content: [{ type: 'text', text: 'ok' }] } },
    { type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: id, num_turns: 1 },
  ]);
  assert.equal(seen, [id, id, id]);
});

sessions('Codex: thread.started carries the thread id that exec resume takes', () => {
  const { seen } = sessionAfter('codex-json', [{ type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' }, { type: 'turn.started' }]);
  assert.equal(seen, ['0199a213-81c0-7800-8aa1-bbab2a035a53', '0199a213-81c0-7800-8aa1-bbab2a035a53']);
});

sessions('Gemini, opencode and Cursor: init session_id, every line\'s sessionID, init session_id', () => {
  assert.is(sessionAfter('gemini-stream-json', [{ type: 'init', timestamp: '2025-10-10T12:00:00.000Z', session_id: 'g-1', model: 'gemini-2.5-pro' }]).final, 'g-1');
  assert.is(sessionAfter('opencode-json', [{ type: 'step_start', timestamp: 1, sessionID: 'ses_1', part: { type: 'step-start' } }]).final, 'ses_1');
  assert.is(sessionAfter('cursor-stream-json', [{ type: 'system', subtype: 'init', session_id: 'c-1', model: 'auto', cwd: '/repo' }]).final, 'c-1');
});

sessions('no session: plain text, a line without one, a blank id', () => {
  assert.is(sessionAfter('text', [{ type: 'system', session_id: 'x' }]).final, undefined);
  assert.is(sessionAfter('claude-stream-json', [{ type: 'rate_limit_event', rate_limit_info: {} }, { type: 'system', subtype: 'init', session_id: '  ' }]).final, undefined);
});

sessions('Claude Code\'s "No conversation found" result says so as the step error', () => {
  const parser = createParser('claude-stream-json');
  parser.push(JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, session_id: 'x', errors: ['No conversation found with session ID: abc'] }));
  assert.is(parser.finish().error, 'No conversation found with session ID: abc');
});

// ─── Resume arguments ───

const argumentsSuite = suite('resume arguments');
const sessionId = '3f1c2a9e-0b7d-4c55-9a1e-2d8f6b7c9e01';

argumentsSuite('Claude Code and Gemini put --resume <id> before the prompt (stdin)', () => {
  const claude = buildInvocation(findBuiltInHarness('claude')!, { prompt: 'fix it', model: 'sonnet', resumeSessionId: sessionId });
  assert.equal(claude.args.slice(-2), ['--resume', sessionId]);
  assert.is(claude.stdin, 'fix it');
  const gemini = buildInvocation(findBuiltInHarness('gemini')!, { prompt: 'fix it', resumeSessionId: sessionId });
  assert.equal(gemini.args, ['--approval-mode', 'auto_edit', '-o', 'stream-json', '--resume', sessionId]);
});

argumentsSuite('Codex: exec and its options, then the resume subcommand with the id, then - for the prompt on stdin', () => {
  const codex = buildInvocation(findBuiltInHarness('codex')!, { prompt: 'fix it', model: 'gpt-5', resumeSessionId: sessionId });
  assert.equal(codex.args, ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-m', 'gpt-5', 'resume', sessionId, '-']);
  const fresh = buildInvocation(findBuiltInHarness('codex')!, { prompt: 'fix it', model: 'gpt-5' });
  assert.equal(fresh.args, ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-m', 'gpt-5', '-']);
});

argumentsSuite('a prompt given as an argument keeps its `--` next to it; harnesses without resume ignore the id', () => {
  const cursor = { ...findBuiltInHarness('cursor')!, resume: ['--resume', '{{sessionId}}'] };
  const invocation = buildInvocation(cursor, { prompt: 'fix it', resumeSessionId: 'c-1' });
  assert.equal(invocation.args.slice(-4), ['--resume', 'c-1', '--', 'fix it']);
  assert.equal(buildInvocation(findBuiltInHarness('amp')!, { prompt: 'x', resumeSessionId: 'a-1' }).args, findBuiltInHarness('amp')!.args);
});

argumentsSuite('a session id is one argument, never a flag or a template', () => {
  const claude = findBuiltInHarness('claude')!;
  assert.throws(() => buildInvocation(claude, { prompt: 'x', resumeSessionId: '--dangerously-skip-permissions' }), /session id .* starts with `-`/);
  const odd = buildInvocation(claude, { prompt: 'x', resumeSessionId: 'a{{model}}b' , model: 'opus' });
  assert.equal(odd.args.slice(-2), ['--resume', 'a{{model}}b']);
});

const harnessSuite = suite<{ factory: TestFactory }>('resume arguments of harnesses');
harnessSuite.before.each(async (context) => {
  context.factory = await startTestFactory();
});
harnessSuite.after.each(async (context) => {
  await context.factory.close();
});

harnessSuite('saving refuses resume arguments without {{sessionId}} or with another placeholder; [] clears a built-in\'s', async ({ factory }) => {
  const base = { name: 'Mine', command: 'claude', args: ['-p'], promptVia: 'stdin', output: 'claude-stream-json' };
  const save = (input: object) => factory.api.saveHarness(input as HarnessDefinition);
  await rejects(save({ ...base, resume: ['--resume'] }), /^The resume arguments .*\{\{sessionId\}\}/m);
  await rejects(save({ ...base, resume: ['--resume', '{{prompt}}'] }), /^The resume arguments .*\{\{prompt\}\}/m);
  await rejects(save({ ...base, args: ['--resume', '{{sessionId}}'] }), /^The arguments .*unknown placeholder/m);
  const custom = await save({ ...base, resume: ['--resume={{sessionId}}'] });
  assert.equal(custom.resume, ['--resume={{sessionId}}']);
  const claude = (await factory.api.snapshot()).harnesses.find((harness) => harness.id === 'claude')!;
  assert.equal(claude.resume, ['--resume', '{{sessionId}}']);
  const cleared = await factory.api.saveHarness({ ...claude, resume: [] });
  assert.is(cleared.resume, undefined);
  assert.is((await factory.api.snapshot()).harnesses.find((harness) => harness.id === 'claude')!.resume, undefined, 'stored as an override');
});

const carrying = suite('Claude Code transcripts');

carrying('the project folder follows the CLI\'s rule: non-alphanumerics as -, long paths cut with a hash', () => {
  assert.is(claudeProjectFolder('/h/.claude', '/work/wt/run_1.x'), '/h/.claude/projects/-work-wt-run-1-x');
  // The hash as the CLI's own code (jCe in 2.1.197) computes it for this path.
  assert.is(claudeProjectFolder('/h/.claude', `/${'a'.repeat(250)}`), `/h/.claude/projects/-${'a'.repeat(199)}-feo44x`);
});

carrying('a session id that is not a UUID is never used as a file name (no ../ out of the projects folder)', async () => {
  const home = join(resolve('.'), `.resume-test-${process.pid}`);
  try {
    mkdirSync(join(home, '.claude', 'projects', 'x'), { recursive: true });
    writeFileSync(join(home, 'secret.jsonl'), 'secret');
    const result = await carryClaudeTranscript({ sessionId: '../../../secret', toFolder: join(home, 'work'), environment: { HOME: home } });
    assert.equal(result, { ok: false, reason: 'the session id "../../../secret" is not a UUID' });
    assert.equal(readdirSync(join(home, '.claude', 'projects')), ['x'], 'nothing copied');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

// ─── Which run a follow-up continues ───

const finder = suite('the earlier run on a branch');

function fakeRun(id: string, extra: Partial<Run> = {}, pullRequestBranch?: string): Run {
  const step: StepRun = { id: 'pr', name: 'pr', kind: 'pullRequest', status: 'succeeded', attempt: 1, ...(pullRequestBranch ? { pullRequest: { number: 12, url: 'https://github.com/o/r/pull/12', repository: 'o/r', branch: pullRequestBranch } } : {}) };
  return { id, pipelineId: 'pl', pipelineName: 'p', projectId: 'prj', variables: {}, status: 'succeeded', createdAt: 0, steps: [step], ...extra };
}

finder('the run whose step opened the pull request, and later follow-ups of it, newest first; never later runs or other branches', () => {
  const followUp = (branch: string): RunFollowUp => ({ repository: 'o/r', number: 12, url: 'https://github.com/o/r/pull/12', branch });
  const opened = fakeRun('run_1', {}, 'factory/run_1');
  const other = fakeRun('run_2', {}, 'factory/run_2');
  const first = fakeRun('run_3', { followUp: followUp('factory/run_1') });
  const current = fakeRun('run_4', { followUp: followUp('factory/run_1') });
  const later = fakeRun('run_5', { followUp: followUp('factory/run_1') });
  assert.equal(earlierRunsOnBranch([opened, other, first, current, later], current), ['run_3', 'run_1']);
  assert.equal(earlierRunsOnBranch([opened, current], fakeRun('run_9')), [], 'not a follow-up');
});

// ─── Follow-up runs through the engine ───

interface Context {
  factory: TestFactory;
  home: string;
  argsFile: string;
  remote: string;
  repo: string;
}

const followUps = suite<Context>('follow-up runs');

const branch = 'factory/run_opened';
const followUp: RunFollowUp = { repository: 'octo/repo', number: 12, url: 'https://github.com/octo/repo/pull/12', branch, reviewId: 80 };

followUps.before.each(async (context) => {
  const factory = await startTestFactory();
  context.factory = factory;
  context.home = join(factory.dir, 'home');
  context.argsFile = join(factory.dir, 'args.jsonl');
  mkdirSync(context.home);
  // A project with worktrees and a remote that has the pull request's branch.
  context.remote = join(factory.dir, 'remote.git');
  context.repo = join(factory.dir, 'repo');
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).toString();
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', context.remote]);
  mkdirSync(context.repo);
  git(context.repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(context.repo, 'README'), 'hello\n');
  git(context.repo, 'add', 'README');
  git(context.repo, 'commit', '-q', '-m', 'first');
  git(context.repo, 'remote', 'add', 'origin', context.remote);
  git(context.repo, 'push', '-q', 'origin', `main:refs/heads/${branch}`);
});
followUps.after.each(async (context) => {
  await context.factory.close();
});

/** The harness `id` running its fake with sessions kept under the test's HOME, its arguments recorded. */
async function useFake(context: Context, id: string, env: Record<string, string> = {}): Promise<void> {
  const harness = (await context.factory.api.snapshot()).harnesses.find((candidate) => candidate.id === id)!;
  await context.factory.api.saveHarness({ ...harness, env: { HOME: context.home, FAKE_SESSIONS: '1', FAKE_ARGS_FILE: context.argsFile, FAKE_NO_WRITE: '1', ...env } });
}

/** A pipeline of one agent step in the worktree project. */
async function agentPipeline(context: Context, harnessId: string, prompt = 'Answer the review: {{issue.description}}'): Promise<string> {
  const project = await context.factory.api.saveProject({ name: `Repo ${harnessId}`, path: context.repo, worktrees: true });
  const step: AgentStep = { id: 'work', name: 'work', kind: 'agent', prompt, harnessId };
  const pipeline = await context.factory.api.savePipeline({ projectId: project.id, name: `Follow-up ${harnessId}`, variables: {}, steps: [step] });
  return pipeline.id;
}

/** Queues a follow-up of the pull request on `branch` through the engine's internal origin and waits for it to end. */
async function runFollowUp(context: Context, pipelineId: string, description: string): Promise<Run> {
  const id = await context.factory.runs.queueRun({ pipelineId, issue: { title: 'Review on #12', description } }, { followUp });
  return context.factory.waitForRun(id, ['succeeded', 'failed', 'cancelled'], 20_000);
}

function invocations(context: Context): { argv: string[]; cwd: string; prompt: string }[] {
  return existsSync(context.argsFile) ? readFileSync(context.argsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line)) : [];
}

async function logText(context: Context, runId: string): Promise<string> {
  return (await context.factory.api.readStepLog(runId, 'work')).map((line) => line.line).join('\n');
}

function transcriptPath(context: Context, folder: string, id: string): string {
  return join(claudeProjectFolder(join(context.home, '.claude'), realpathSync(folder)), `${id}.jsonl`);
}

followUps('the session id is on the step (and in run.json) as soon as the CLI prints its init line', async (context) => {
  await useFake(context, 'claude', { FAKE_MODE: 'hang' });
  const pipelineId = await agentPipeline(context, 'claude');
  const run = await context.factory.api.startRun({ pipelineId });
  let stored: string | undefined;
  await waitFor(() => {
    const path = join(context.factory.dir, 'runs', run.id, 'run.json');
    stored = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Run).steps[0]!.sessionId : undefined;
    return stored !== undefined;
  }, 10_000, 'the session id in run.json while the agent still runs');
  const live = (await context.factory.api.getRun(run.id))!;
  assert.is(live.status, 'running');
  assert.is(live.steps[0]!.sessionId, stored);
  assert.match(stored!, /^[0-9a-f-]{36}$/);
  await context.factory.api.cancelRun(run.id);
});

followUps('a follow-up resumes the earlier run\'s Claude session with --resume <id>, its transcript copied to the new worktree\'s project folder', async (context) => {
  await useFake(context, 'claude');
  const pipelineId = await agentPipeline(context, 'claude');
  const first = await runFollowUp(context, pipelineId, 'rename foo');
  assert.is(first.status, 'succeeded', first.error);
  const session = first.steps[0]!.sessionId!;
  assert.ok(session, 'the first run recorded its session');
  assert.ok(existsSync(transcriptPath(context, first.workspace!, session)), 'the fake kept the transcript by folder');
  assert.not.ok((await logText(context, first.id)).includes('Resuming'), 'nothing earlier to resume');

  const second = await runFollowUp(context, pipelineId, 'and bar');
  assert.is(second.status, 'succeeded', second.error);
  assert.is.not(second.workspace, first.workspace, 'a new worktree');
  const [, call] = invocations(context);
  assert.equal(call!.argv.slice(-2), ['--resume', session]);
  assert.is(call!.prompt, 'Answer the review: and bar', 'the session has the context: the prompt alone');
  assert.ok(existsSync(transcriptPath(context, second.workspace!, session)), 'the transcript is in the new folder\'s project folder');
  assert.is(second.steps[0]!.sessionId, session, 'the resumed session keeps its id');
  assert.is(second.steps[0]!.attempt, 1);
  assert.match(await logText(context, second.id), new RegExp(`Resuming Claude Code session ${session} from run ${first.id}`));
});

followUps('a session whose transcript is gone starts fresh with the earlier run\'s summary, and says so', async (context) => {
  await useFake(context, 'claude');
  const pipelineId = await agentPipeline(context, 'claude');
  const first = await runFollowUp(context, pipelineId, 'rename foo');
  rmSync(join(context.home, '.claude'), { recursive: true });

  const second = await runFollowUp(context, pipelineId, 'and bar');
  assert.is(second.status, 'succeeded', second.error);
  const [, call] = invocations(context);
  assert.not.ok(call!.argv.includes('--resume'));
  assert.match(call!.prompt, new RegExp(`^This continues the work of run ${first.id} on the same branch\\. That run ended with this summary:\\n\\nDone: Answer the review: rename foo`));
  assert.match(call!.prompt, /---\n\nAnswer the review: and bar$/);
  assert.is(second.steps[0]!.prompt, call!.prompt, 'the step shows the prompt the agent got');
  assert.match(await logText(context, second.id), new RegExp(`Cannot resume Claude Code session ${first.steps[0]!.sessionId} from run ${first.id}: its transcript .* is not under .*; starting fresh with the summary of run ${first.id}`));
});

followUps('a CLI that answers "No conversation found" is run once more, fresh with the summary, in the same attempt', async (context) => {
  // A custom harness on the fake Claude whose sessions Factory does not carry between folders.
  const custom = await context.factory.api.saveHarness({
    id: '', builtIn: false, enabled: true, versionArgs: ['--version'], models: [],
    name: 'Claude elsewhere', command: 'claude', args: ['-p', '--output-format', 'stream-json', '--verbose'], promptVia: 'stdin',
    output: 'amp-stream-json', resume: ['--resume', '{{sessionId}}'], env: { HOME: context.home, FAKE_SESSIONS: '1', FAKE_ARGS_FILE: context.argsFile, FAKE_NO_WRITE: '1' },
  });
  const pipelineId = await agentPipeline(context, custom.id);
  const first = await runFollowUp(context, pipelineId, 'rename foo');
  assert.is(first.status, 'succeeded', first.error);

  const second = await runFollowUp(context, pipelineId, 'and bar');
  assert.is(second.status, 'succeeded', second.error);
  const calls = invocations(context);
  assert.is(calls.length, 3, 'first run, the resume the CLI refused, the fresh start');
  assert.equal(calls[1]!.argv.slice(-2), ['--resume', first.steps[0]!.sessionId!]);
  assert.not.ok(calls[2]!.argv.includes('--resume'));
  assert.match(calls[2]!.prompt, /^This continues the work of run .*Done: Answer the review: rename foo/s);
  assert.is(second.steps[0]!.attempt, 1, 'not counted as a failed attempt');
  assert.is.not(second.steps[0]!.sessionId, first.steps[0]!.sessionId, 'the fresh session is the one recorded');
  assert.match(await logText(context, second.id), /Claude elsewhere has no session .*: starting fresh with the summary of run .* \(not counted as a failed attempt\)/);
});

followUps('Codex resumes its thread with exec … resume <thread id> -', async (context) => {
  await useFake(context, 'codex');
  const pipelineId = await agentPipeline(context, 'codex');
  const first = await runFollowUp(context, pipelineId, 'rename foo');
  assert.is(first.status, 'succeeded', first.error);
  const thread = first.steps[0]!.sessionId!;
  assert.ok(thread);
  const second = await runFollowUp(context, pipelineId, 'and bar');
  assert.is(second.status, 'succeeded', second.error);
  assert.equal(invocations(context)[1]!.argv, ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', 'resume', thread, '-']);
});

followUps('an earlier session of another harness is not resumed: a fresh start with the summary', async (context) => {
  await useFake(context, 'claude');
  await useFake(context, 'codex');
  const first = await runFollowUp(context, await agentPipeline(context, 'claude'), 'rename foo');
  const second = await runFollowUp(context, await agentPipeline(context, 'codex'), 'and bar');
  assert.is(second.status, 'succeeded', second.error);
  const call = invocations(context)[1]!;
  assert.not.ok(call.argv.includes('resume'));
  assert.match(call.prompt, /Done: Answer the review: rename foo/);
  assert.match(await logText(context, second.id), new RegExp(`Run ${first.id} left no Codex session: starting fresh with the summary of run ${first.id}`));
});

sessions.run();
argumentsSuite.run();
harnessSuite.run();
carrying.run();
finder.run();
followUps.run();
