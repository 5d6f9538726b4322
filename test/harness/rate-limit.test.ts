// The model provider's usage limit does not fail a run (issue 24.3): each CLI's real words are read
// to a reset time (fixed clocks and time zones), the step waits (run `waiting`, liveness
// `rateLimited`, resumeAt) and goes on at resumeAt in the agent's session, as the same attempt;
// approveStep lets it go on now or stops it; a restart arms the wait again; 24 hours of waits fail.
// The fake CLIs (FAKE_MODE=limit) print the forms of PROVIDERS.md §7 and record their arguments.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, Run } from '../../src/core/api';
import { readClockTime, UsageLimitWatcher } from '../../src/harness/usage-limits';
import { clockWords, decideRateLimitWait, firstBackoffMs, longestBackoffMs, maxRateLimitWaitMs } from '../../src/engine/rate-limit-waits';
import { Notices } from '../../src/channels/notices';
import type { NewInboxItem } from '../../src/channels/inbox';
import type { InboxItem } from '../../src/core/api';
import { startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;

const agent = (id: string, harnessId: string, extra: Partial<AgentStep> = {}): AgentStep => ({ id, name: id, kind: 'agent', prompt: 'Fix the bug', harnessId, ...extra });

/** The limit a watcher reads from these lines (objects as JSON lines) at `now` in `timeZone`. */
function limitOf(lines: (object | string)[], now: number, timeZone = 'UTC') {
  const watcher = new UsageLimitWatcher(() => now, timeZone);
  for (const line of lines) watcher.see(typeof line === 'string' ? line : JSON.stringify(line));
  return watcher.hit;
}

// ─── Each CLI's words, read to a reset time ───

const words = suite('usage-limit words');
/** 2026-03-10 09:30 UTC. */
const morning = Date.UTC(2026, 2, 10, 9, 30);

words('Claude Code: a rejected rate_limit_event gives resetsAt (epoch seconds); an allowed_warning is no limit', () => {
  const event = (status: string) => ({ type: 'rate_limit_event', rate_limit_info: { status, resetsAt: 1773151200, rateLimitType: 'five_hour', utilization: 1 }, uuid: 'u', session_id: 's' });
  assert.equal(limitOf([event('rejected')], morning), { message: "You've hit your session limit", resetsAt: 1773151200_000 });
  assert.is(limitOf([event('allowed_warning'), event('allowed')], morning), undefined);
});

words('Claude Code: the assistant line with error rate_limit and the 429 result, read in the zone they name', () => {
  const text = "You've hit your session limit · resets 3pm (Europe/Berlin)";
  const hit = limitOf([
    { type: 'assistant', session_id: 's', error: 'rate_limit', message: { id: 'm', role: 'assistant', content: [{ type: 'text', text }] } },
    { type: 'result', subtype: 'success', is_error: true, api_error_status: 429, result: text, session_id: 's' },
  ], morning);
  // 15:00 in Berlin (UTC+1 in March before the change) is 14:00 UTC, later the same day.
  assert.equal(hit, { message: text, resetsAt: Date.UTC(2026, 2, 10, 14, 0) });
  // A time already past today is tomorrow's; minutes and a date over a day away are read too.
  assert.is(limitOf([{ type: 'result', is_error: true, api_error_status: 429, result: "You've hit your weekly limit · resets 8:30am (UTC)" }], morning)!.resetsAt, Date.UTC(2026, 2, 11, 8, 30));
  assert.is(limitOf([{ type: 'result', is_error: true, api_error_status: 429, result: "You've hit your Opus limit · resets Mar 14, 3pm (America/New_York)" }], morning)!.resetsAt, Date.UTC(2026, 2, 14, 19, 0));
});

words('Claude Code: the older "Claude AI usage limit reached|<epoch>" form', () => {
  assert.equal(limitOf(['Claude AI usage limit reached|1773151200'], morning), { message: 'Claude AI usage limit reached', resetsAt: 1773151200_000 });
  assert.equal(limitOf([{ type: 'result', subtype: 'success', is_error: true, result: 'Claude AI usage limit reached|1773151200' }], morning)?.resetsAt, 1773151200_000);
});

words('Codex: "You’ve hit your usage limit. Try again at 3:05 PM." in the machine\'s local time (TZ of the process)', () => {
  const line = { type: 'error', message: 'You\u2019ve hit your usage limit. Try again at 3:05 PM.' };
  assert.is(limitOf([line], morning, 'Asia/Tokyo')!.resetsAt, Date.UTC(2026, 2, 11, 6, 5), 'Tokyo: 18:30 now, so 15:05 is tomorrow');
  assert.is(limitOf([line], morning, 'America/Los_Angeles')!.resetsAt, Date.UTC(2026, 2, 10, 22, 5), 'Los Angeles (PDT from Mar 8): 02:30 now, 15:05 today');
  const previous = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  try {
    const watcher = new UsageLimitWatcher(() => morning);
    watcher.see(JSON.stringify({ type: 'turn.failed', error: { message: line.message } }));
    assert.is(watcher.hit!.resetsAt, Date.UTC(2026, 2, 10, 14, 5), 'the default zone follows TZ');
  } finally {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  }
});

words('Codex: another day\'s date, the server\'s resets_at, and the stderr line of text mode', () => {
  assert.is(limitOf([{ type: 'error', message: 'You\u2019ve hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Mar 12th, 2026 9:15 AM.' }], morning)!.resetsAt, Date.UTC(2026, 2, 12, 9, 15));
  assert.is(limitOf([{ type: 'error', message: 'unexpected status 429: {"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_at":1773151200,"resets_in_seconds":8123}}' }], morning)!.resetsAt, 1773151200_000, 'the server\'s body');
  assert.is(limitOf([{ type: 'error', message: 'You\u2019ve hit your usage limit. {"resets_at":1773151200}' }], morning)!.resetsAt, 1773151200_000);
  assert.equal(limitOf(['ERROR: You\u2019ve hit your usage limit. Try again later.'], morning), { message: 'You\u2019ve hit your usage limit. Try again later.' });
});

words('Gemini: the TerminalQuotaError result with its retry delay; a daily quota names no time', () => {
  const retry = '[API Error: You exceeded your current quota. Please retry in 41.2s. (Status: RESOURCE_EXHAUSTED)]';
  assert.is(limitOf([{ type: 'result', timestamp: 't', status: 'error', error: { type: 'TerminalQuotaError', message: retry }, stats: {} }], morning)!.resetsAt, morning + 41_200);
  const daily = limitOf([{ type: 'result', status: 'error', error: { type: 'TerminalQuotaError', message: '[API Error: You have exhausted your daily quota on this model.]' } }], morning);
  assert.equal(daily, { message: '[API Error: You have exhausted your daily quota on this model.]' });
  assert.is(limitOf([{ type: 'error', severity: 'error', message: '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}' }], morning)!.resetsAt, morning + 30_000);
});

words('the same words in an answer, a tool result or a warning are no limit', () => {
  const text = "You've hit your usage limit · resets 3pm (UTC)";
  assert.is(limitOf([
    { type: 'assistant', session_id: 's', message: { id: 'm', role: 'assistant', content: [{ type: 'text', text }] } },
    { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'You\u2019ve hit your usage limit. Try again at 3:05 PM.', is_error: false }] } },
    { type: 'item.completed', item: { id: 'i', type: 'agent_message', text: 'rate_limit RESOURCE_EXHAUSTED 429 quota' } },
    { type: 'error', severity: 'warning', message: 'You\u2019ve hit your usage limit.' },
    'grep -n "usage limit" src/harness/usage-limits.ts',
  ], morning), undefined);
});

words('clock words the CLIs print: narrow no-break spaces, dots, and what is not a time', () => {
  assert.is(readClockTime('3:05\u202fPM', 'UTC', morning), Date.UTC(2026, 2, 10, 15, 5));
  assert.is(readClockTime('12am', 'UTC', morning), Date.UTC(2026, 2, 11, 0, 0));
  assert.is(readClockTime('Jan 5, 2027, 3pm', 'UTC', morning), Date.UTC(2027, 0, 5, 15, 0));
  assert.is(readClockTime('Jan 5, 3pm', 'UTC', morning), Date.UTC(2027, 0, 5, 15, 0), 'a date this year already past is next year\'s');
  assert.is(readClockTime('13pm', 'UTC', morning), undefined);
  assert.is(readClockTime('soon', 'UTC', morning), undefined);
});

// ─── When a step goes on ───

const waits = suite('rate-limit waits');
const start = Date.UTC(2026, 2, 10, 9, 0);

waits('at the named reset; else 1, 2, 4 … minutes, at most an hour', () => {
  assert.equal(decideRateLimitWait(undefined, { message: 'x', resetsAt: start + 5 * 60_000 }, start, 'Claude Code'), { wait: true, resumeAt: start + 5 * 60_000, history: { since: start, waits: 1 } });
  let history;
  const delays: number[] = [];
  let now = start;
  for (let wait = 0; wait < 9; wait++) {
    const decision = decideRateLimitWait(history, { message: 'x' }, now, 'Codex');
    assert.ok(decision.wait);
    delays.push((decision.resumeAt - now) / 60_000);
    history = decision.history;
    now = decision.resumeAt;
  }
  assert.equal(delays, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
  assert.is(firstBackoffMs, 60_000);
  assert.is(longestBackoffMs, 3600_000);
  // A reset already past is no reset: the backoff.
  assert.equal(decideRateLimitWait(undefined, { message: 'x', resetsAt: start - 1 }, start, 'Gemini CLI'), { wait: true, resumeAt: start + 60_000, history: { since: start, waits: 1 } });
});

waits('24 hours after the first wait the step fails in words (injected clock)', () => {
  let now = start;
  let history;
  let decision = decideRateLimitWait(undefined, { message: 'You’ve hit your usage limit. Try again later.' }, now, 'Codex');
  while (decision.wait) {
    history = decision.history;
    now = decision.resumeAt;
    decision = decideRateLimitWait(history, { message: 'You’ve hit your usage limit. Try again later.' }, now, 'Codex');
  }
  assert.ok(now - start <= maxRateLimitWaitMs && now - start > maxRateLimitWaitMs - longestBackoffMs, 'it waited almost 24 hours');
  assert.match(decision.error, /^Codex was still rate limited after waiting since .+ \(\d+ waits; the most is 24 hours\): You’ve hit your usage limit\. Try again later\. Retry the run when the limit has reset$/);
  const far = decideRateLimitWait(undefined, { message: "You've hit your weekly limit", resetsAt: start + 25 * 3600_000 }, start, 'Claude Code');
  assert.equal(far.wait, false);
  assert.match((far as { error: string }).error, /^Claude Code hit the model's usage limit \(You've hit your weekly limit\); it resets .+, more than 24 hours away, so the step stopped waiting: retry the run after that$/);
});

waits('the inbox hears of a step’s waits in a row once, and of a later attempt’s wait again; channels are not told', () => {
  const items: NewInboxItem[] = [];
  const notified: string[] = [];
  const notices = new Notices(
    { add: async (item) => (items.push(item), item as InboxItem), markRead: async () => undefined, unreadApprovals: () => [] },
    { wants: () => true, notify: (kind) => void notified.push(kind) },
    () => undefined,
  );
  const run = { id: 'run_1', pipelineName: 'Fix', issue: { title: 'Dark mode', key: 'UI-7' } } as Run;
  const step = (attempt: number, livenessSince: number, resumeAt: number) => ({ id: 'fix', name: 'fix', kind: 'agent', status: 'waiting', attempt, liveness: 'rateLimited', livenessSince, resumeAt }) as Run['steps'][number];
  notices.runEvent({ type: 'step-liveness', run, step: step(1, morning, morning + 60_000) });
  notices.runEvent({ type: 'step-liveness', run, step: step(1, morning, morning + 180_000) });
  notices.runEvent({ type: 'step-liveness', run, step: { ...step(1, morning, morning), liveness: 'stalled' } });
  notices.runEvent({ type: 'step-liveness', run, step: step(2, morning + 600_000, morning + 660_000) });
  assert.equal(items.map((item) => item.kind), ['step.rateLimited', 'step.rateLimited']);
  assert.match(items[0]!.body!, /^Fix · Dark mode \(UI-7\)\nThe agent reached the model provider's usage limit\. The step goes on by itself at /);
  assert.equal(notified, []);
});

// ─── Through the engine ───

const engine = suite<{ factory: TestFactory; dir: string; argsFile: string }>('rate-limited steps');

engine.before.each(async (context) => {
  context.dir = makeTempDir('factory-rate-limit');
  context.argsFile = join(context.dir, 'args.jsonl');
  context.factory = await startTestFactory();
});
engine.after.each(async (context) => {
  await context.factory.close();
  removeTempDir(context.dir);
});

async function useEnv(factory: TestFactory, harnessId: string, env: Record<string, string>): Promise<void> {
  const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === harnessId)!;
  await factory.api.saveHarness({ ...harness, env });
}

/** The argv of each run of the fake CLI. */
function invocations(argsFile: string): string[][] {
  return readFileSync(argsFile, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { argv: string[] }).argv);
}

/** Waits for the run to wait out the limit; returns it. */
async function waitingRun(factory: TestFactory, runId: string): Promise<Run> {
  const run = await factory.waitForRun(runId, ['waiting', 'failed', 'succeeded']);
  assert.is(run.status, 'waiting', run.error);
  return run;
}

engine('Claude Code: the step waits until resetsAt, then resumes its session with --resume <id> and succeeds, as one attempt', async ({ factory, dir, argsFile }) => {
  const resetsAt = Math.ceil(Date.now() / 1000) + 2;
  await useEnv(factory, 'claude', { FAKE_MODE: 'limit', FAKE_LIMIT_STATE: join(dir, 'count'), FAKE_LIMIT_TIMES: '1', FAKE_RESETS_AT: String(resetsAt), FAKE_ARGS_FILE: argsFile });
  const pipeline = await factory.pipeline([agent('fix', 'claude')]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const waiting = await waitingRun(factory, id);
  const step = waiting.steps[0]!;
  assert.equal({ status: step.status, liveness: step.liveness, resumeAt: step.resumeAt, attempt: step.attempt }, { status: 'waiting', liveness: 'rateLimited', resumeAt: resetsAt * 1000, attempt: 1 });
  assert.ok(step.sessionId, 'the session is known');
  assert.ok(step.usage?.outputTokens, 'the cut-off part\'s usage is kept');
  assert.is((await factory.api.listRuns())[0]!.steps[0]!.liveness, 'rateLimited', 'listRuns shows it');
  assert.is(((await factory.api.listRuns())[0]!.steps[0] as { rateLimit?: unknown }).rateLimit, undefined, 'the stored waits stay inside');

  const done = await factory.waitForRun(id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  const finished = done.steps[0]!;
  assert.is(finished.attempt, 1, 'the wait was not an attempt');
  assert.is(finished.liveness, undefined, 'liveness is cleared when the step ends');
  assert.is(finished.resumeAt, undefined);
  const runs = invocations(argsFile);
  assert.is(runs.length, 2);
  assert.not.ok(runs[0]!.includes('--resume'));
  assert.equal(runs[1]!.slice(runs[1]!.indexOf('--resume'), runs[1]!.indexOf('--resume') + 2), ['--resume', step.sessionId]);
  assert.is(finished.sessionId, step.sessionId);
  assert.ok((finished.usage?.outputTokens ?? 0) > (step.usage?.outputTokens ?? 0), 'both parts\' usage is counted');
  const log = (await factory.api.readStepLog(id, 'fix')).map((line) => line.line);
  assert.ok(log.some((line) => /^You've hit your session limit · resets .+ \(UTC\): the step waits until .+, then goes on in the agent's session \(not a failed attempt\)$/.test(line)), log.join('\n'));
  assert.ok(log.some((line) => /^Resuming Claude Code session .+ after the usage limit$/.test(line)));
});

engine('Codex: approveStep on the waiting step resumes now with exec … resume <id> -; Gemini: approveStep false fails it in words', async ({ factory, dir, argsFile }) => {
  await useEnv(factory, 'codex', { FAKE_MODE: 'limit', FAKE_LIMIT_STATE: join(dir, 'count'), FAKE_LIMIT_TIMES: '1', FAKE_RESETS_AT: String(Math.floor(Date.now() / 1000) + 7200), FAKE_ARGS_FILE: argsFile });
  const pipeline = await factory.pipeline([agent('fix', 'codex')]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const waiting = await waitingRun(factory, id);
  const resumeAt = waiting.steps[0]!.resumeAt!;
  assert.ok(resumeAt > Date.now() + 7000_000 && resumeAt <= Date.now() + 7200_000, 'the "Try again at" time, read to the minute');
  let told: InboxItem[] = [];
  await waitFor(async () => (told = (await factory.api.snapshot()).inbox.filter((item) => item.kind === 'step.rateLimited')).length > 0, 5000, 'the inbox item');
  assert.is(told.length, 1, 'one inbox item says the step waits');
  assert.equal({ title: told[0]!.title, runId: told[0]!.runId }, { title: 'Step fix waits for the usage limit', runId: id });
  assert.ok(told[0]!.body?.includes(`goes on by itself at ${clockWords(resumeAt)}`), told[0]!.body);
  await factory.api.approveStep(id, 'fix', true);
  const done = await factory.waitForRun(id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[0]!.attempt, 1);
  const runs = invocations(argsFile);
  assert.equal(runs[1]!.slice(-3), ['resume', waiting.steps[0]!.sessionId, '-']);

  await useEnv(factory, 'gemini', { FAKE_MODE: 'limit' });
  const geminiPipeline = await factory.pipeline([agent('ask', 'gemini')], { name: 'Gemini' });
  const second = await factory.api.startRun({ pipelineId: geminiPipeline.id });
  const geminiWaiting = await waitingRun(factory, second.id);
  assert.ok(Math.abs(geminiWaiting.steps[0]!.resumeAt! - (Date.now() + 3600_000)) < 60_000, 'the retry delay');
  await factory.api.approveStep(second.id, 'ask', false, 'not today');
  const stopped = await factory.waitForRun(second.id, ['failed']);
  assert.is(stopped.steps[0]!.error, "Stopped waiting for the model's usage limit to reset: not today");
  assert.is(stopped.error, "Step `ask` failed: Stopped waiting for the model's usage limit to reset: not today");
});

engine('a reset more than 24 hours away fails the step in words at once', async ({ factory }) => {
  await useEnv(factory, 'claude', { FAKE_MODE: 'limit', FAKE_RESETS_AT: String(Math.floor(Date.now() / 1000) + 25 * 3600) });
  const pipeline = await factory.pipeline([agent('fix', 'claude')]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(id, ['failed', 'waiting', 'succeeded']);
  assert.is(done.status, 'failed');
  assert.match(done.steps[0]!.error!, /^Claude Code hit the model's usage limit \(You've hit your session limit · resets .+\); it resets .+, more than 24 hours away, so the step stopped waiting: retry the run after that$/);
});

const restart = suite('rate-limited steps across a restart');

restart('a restart arms the wait again from resumeAt, and the step then resumes its session', async () => {
  const dir = makeTempDir('factory-rate-limit-restart');
  const argsFile = join(dir, 'args.jsonl');
  try {
    let factory = await startTestFactory({ dir: join(dir, 'data') });
    const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === 'claude')!;
    await factory.api.saveHarness({ ...harness, env: { FAKE_MODE: 'limit', FAKE_LIMIT_STATE: join(dir, 'count'), FAKE_LIMIT_TIMES: '1', FAKE_RESETS_AT: String(Math.ceil(Date.now() / 1000) + 3), FAKE_ARGS_FILE: argsFile } });
    const pipeline = await factory.pipeline([agent('fix', 'claude')]);
    const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
    const waiting = await waitingRun(factory, id);
    await factory.close();
    factory = await startTestFactory({ dir: join(dir, 'data') });
    try {
      const reopened = (await factory.api.getRun(id))!;
      assert.equal({ status: reopened.status, liveness: reopened.steps[0]!.liveness, resumeAt: reopened.steps[0]!.resumeAt }, { status: 'waiting', liveness: 'rateLimited', resumeAt: waiting.steps[0]!.resumeAt });
      const done = await factory.waitForRun(id, ['succeeded', 'failed']);
      assert.is(done.status, 'succeeded', done.error);
      assert.is(done.steps[0]!.attempt, 1);
      const runs = invocations(argsFile);
      assert.ok(runs[1]!.includes('--resume') && runs[1]!.includes(waiting.steps[0]!.sessionId!));
    } finally {
      await factory.close();
    }
  } finally {
    removeTempDir(dir);
  }
});

words.run();
waits.run();
engine.run();
restart.run();
