// Approvals decided from the issue's comments (issue 26): `/approve`, `/approve 2`, `/reject` on
// GitHub, Linear and Jira, by webhook (the trackers' real comment events: GitHub's issue_comment,
// Linear's Comment create, Jira's comment_created) and by poll alone; who may decide; the one
// comment's feedback; first answer wins; replays, restarts and hostile comments. Real Factory,
// real webhook server, fake trackers on 127.0.0.1.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionInput, ConnectionView, Run, TriggerConfig, TriggerInput } from '../../src/core/api';
import { validateTrigger } from '../../src/core/trigger-config';
import { maxCommandIds, readCommand } from '../../src/triggers/comment-commands';
import { FakeGitHub, type FakeGitHubIssue } from '../fakes/github';
import { FakeJira, type FakeJiraIssue } from '../fakes/jira';
import { FakeLinear, type FakeIssue } from '../fakes/linear';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const secret = 'approval-commands-secret-0123456789';
const tuning = { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] };

// ─── Reading a command ───

const reading = suite('approval command text');

reading('the first line is the command, the rest the comment', () => {
  assert.equal(readCommand('/approve'), { kind: 'command', approved: true, selected: [], comment: '', line: '/approve' });
  assert.equal(readCommand('/approve 2\nShip it'), { kind: 'command', approved: true, selected: ['2'], comment: 'Ship it', line: '/approve 2' });
  assert.equal(readCommand('  /Approve 1,3 looks good\r\nreally'), { kind: 'command', approved: true, selected: ['1', '3'], comment: 'looks good\nreally', line: '/Approve 1,3 looks good' });
  assert.equal(readCommand('/reject needs tests'), { kind: 'command', approved: false, selected: [], comment: 'needs tests', line: '/reject needs tests' });
  assert.equal(readCommand('!approve 2', '!'), { kind: 'command', approved: true, selected: ['2'], comment: '', line: '!approve 2' });
  for (const text of ['/approved', 'please /approve', '/approve', 'ok']) assert.is(readCommand(text, text === '/approve' ? '!' : '/').kind, 'none', text);
  assert.is(readCommand('**Factory** · run `run_1` /approve').kind, 'none', 'Factory\'s own first line is never a command');
});

reading('a comment of a megabyte and a command of 10,000 ids are refused with the limit, quickly', () => {
  const huge = readCommand(`/approve\n${'x'.repeat(1_000_000)}`);
  assert.equal(huge, { kind: 'refused', line: '/approve', reason: 'its comment has 1,000,000 characters; an approval keeps at most 10,000' });
  const ids = readCommand(`/approve ${Array.from({ length: 10_000 }, (_, index) => index + 1).join(',')}`);
  assert.is(ids.kind, 'refused');
  assert.is((ids as { reason: string }).reason, `it names more than ${maxCommandIds} option ids; name at most ${maxCommandIds}`);
  assert.is(readCommand(`/approve ${Array.from({ length: maxCommandIds }, (_, index) => index + 1).join(' ')}`).kind, 'command', 'exactly the limit is taken');
  assert.is(readCommand(`${'/approve'.repeat(200_000)}`).kind, 'none');
});

reading('a trigger\'s command prefix is 1 to 3 characters without spaces; approvers are a list', () => {
  const base = { name: 'x', kind: 'github', pipelineId: 'pl_1', connectionId: 'con_1', filter: { repo: 'a/b' } };
  const context = { pipelineIds: ['pl_1'], connectionIds: ['con_1'], availableKinds: ['github' as const] };
  assert.is(validateTrigger({ ...base, commandPrefix: '!!' }, context).commandPrefix, '!!');
  assert.equal(validateTrigger({ ...base, approvers: [' alice ', ''] }, context).approvers, ['alice']);
  for (const prefix of ['', null]) assert.is(validateTrigger({ ...base, commandPrefix: prefix }, context).commandPrefix, undefined);
  for (const prefix of ['/ ', '....', 7]) assert.throws(() => validateTrigger({ ...base, commandPrefix: prefix }, context), /The command prefix must be 1 to 3 characters without spaces/);
  assert.throws(() => validateTrigger({ ...base, approvers: 'alice' }, context), /approvers must be a list/);
});

reading.run();

// ─── Each tracker, through one harness ───

/** What a test needs of one tracker: its fake, its people and how they comment. */
interface Tracker<I> {
  kind: 'github' | 'linear' | 'jira';
  stop(): Promise<void>;
  account: ConnectionInput;
  filter: TriggerInput['filter'];
  addIssue(title: string): I;
  /** `who`: a person allowed by default, one who is not, or the connection's own account. */
  comment(issue: I, body: string, who: 'allowed' | 'refused' | 'own'): string;
  /** Sends the tracker's comment event for the issue's last comment. */
  deliver(url: string, issue: I, options?: { secret?: string }): Promise<{ status: number; body: any }>;
  /** The run's one comment (Factory's), as text. */
  factoryComment(issue: I): string | undefined;
  /** How many comments the issue has. */
  commentCount(issue: I): number;
  /** The allowed person as a decision names them, and as `approvers` may name them (another letter case). */
  allowedName: string;
  allowedHandle: string;
}

async function githubTracker(): Promise<Tracker<FakeGitHubIssue> & { fake: FakeGitHub }> {
  const fake = await FakeGitHub.start();
  const repo = 'acme/app';
  fake.addRepo(repo);
  fake.clock = Date.now();
  fake.setRole(repo, 'alice', 'write');
  fake.setRole(repo, 'bob', 'read');
  const logins = { allowed: 'alice', refused: 'bob', own: fake.user.login };
  return {
    kind: 'github', fake, stop: () => fake.stop(), account: { kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token }, filter: { repo },
    addIssue: (title) => fake.addIssue(repo, { title }),
    comment: (issue, body, who) => String(fake.addComment(repo, issue.number, body, { author: logins[who] }).id),
    deliver(url, issue, options = {}) {
      const last = fake.comments(repo, issue.number).at(-1)!;
      return fake.deliver(url, 'issue_comment', fake.payload('issue_comment', 'created', issue, { id: last.id }, { sender: last.user.login }), options);
    },
    factoryComment: (issue) => fake.comments(repo, issue.number).find((comment) => comment.user.login === fake.user.login && comment.body.startsWith('**Factory**'))?.body,
    commentCount: (issue) => fake.comments(repo, issue.number).length,
    allowedName: '@alice', allowedHandle: 'ALICE',
  };
}

async function linearTracker(): Promise<Tracker<FakeIssue> & { fake: FakeLinear }> {
  const fake = await FakeLinear.start();
  fake.clock = Date.now();
  const people = { allowed: fake.users[1]!, refused: fake.users[2]!, own: fake.viewer };
  return {
    kind: 'linear', fake, stop: () => fake.stop(), account: { kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey }, filter: { team: 'ENG' },
    addIssue: (title) => fake.addIssue({ title }),
    comment: (issue, body, who) => fake.addComment(issue, body, people[who]).id,
    deliver: (url, issue, options = {}) => fake.deliver(url, fake.commentWebhookPayload(fake.commentsOn(issue).at(-1)!), { ...options, ...(options.secret ? {} : { signature: null }) }),
    factoryComment: (issue) => fake.commentsOn(issue).find((comment) => comment.user.id === fake.viewer.id && comment.body.startsWith('**Factory**'))?.body,
    commentCount: (issue) => fake.commentsOn(issue).length,
    allowedName: 'Grace Hopper', allowedHandle: 'GRACE@example.com',
  };
}

async function jiraTracker(): Promise<Tracker<FakeJiraIssue> & { fake: FakeJira }> {
  const fake = await FakeJira.start({ mode: 'cloud' });
  const people = { allowed: 'other', refused: 'stranger', own: 'me' } as const;
  return {
    kind: 'jira', fake, stop: () => fake.stop(), account: { kind: 'jira', name: 'Acme', baseUrl: fake.url, token: fake.token, email: fake.email }, filter: { query: 'project = KAN AND statusCategory != Done' },
    addIssue: (title) => fake.addIssue({ summary: title }),
    comment: (issue, body, who) => fake.addComment(issue, body, { author: people[who] }).id,
    deliver: (url, issue, options = {}) => fake.deliver(url, fake.payload('comment_created', issue), options.secret ? { secret: options.secret } : { signature: null }),
    factoryComment: (issue) => fake.comments(issue).find((comment) => comment.text.startsWith('Factory · run'))?.text,
    commentCount: (issue) => fake.comments(issue).length,
    allowedName: 'Grace Hopper', allowedHandle: 'GRACE@EXAMPLE.COM',
  };
}

interface Context<I> {
  tracker: Tracker<I>;
  factory: TestFactory;
  account: ConnectionView;
  hooks: string;
  port: number;
}

async function startFactory<I>(context: Context<I>, dir?: string): Promise<void> {
  context.factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port: context.port } }, triggerTuning: tuning, ...(dir ? { dir } : {}) });
  context.hooks = `http://127.0.0.1:${context.port}/hooks`;
}

/** A trigger of a gated pipeline (an approval with choices Red and Green, then a step), writing back its comment. */
async function gatedTrigger<I>(context: Context<I>, extra: Partial<TriggerInput> = {}, steps = [approval('gate', 'Ship it?', { mode: 'single', options: ['Red', 'Green'] }), shell('ship', 'echo "{{steps.gate.selected}}"')]): Promise<TriggerConfig> {
  const pipeline = await context.factory.pipeline(steps, { name: 'Gated' });
  return context.factory.api.saveTrigger({
    name: 'Gated issues', kind: context.tracker.kind, enabled: true, pipelineId: pipeline.id, connectionId: context.account.id,
    filter: context.tracker.filter, writeBack: { comment: true }, webhookSecret: secret, ...extra,
  });
}

/** Starts the issue's run by a poll and waits until it waits, its comment written. */
async function waitingRun<I>(context: Context<I>, trigger: TriggerConfig, issue: I): Promise<Run> {
  await context.factory.api.pollTrigger(trigger.id);
  const runs = await context.factory.api.listRuns();
  const run = await context.factory.waitForRun(runs[0]!.id, ['waiting']);
  await waitFor(() => context.tracker.factoryComment(issue)?.includes('waiting for approval') ?? false, 5000, 'the waiting comment');
  return run;
}

async function ledger<I>(context: Context<I>, triggerId: string): Promise<string[]> {
  const snapshot = await context.factory.api.snapshot();
  return snapshot.triggerStates[triggerId]!.ledger.map((entry) => entry.decision);
}

function trackerSuite<I>(name: string, make: () => Promise<Tracker<I>>) {
  const tests = suite<Context<I>>(`approval commands on ${name}`);
  tests.before.each(async (context) => {
    context.tracker = await make();
    context.port = await freePort();
    await startFactory(context);
    context.account = await context.factory.api.saveConnection(context.tracker.account);
  });
  tests.after.each(async (context) => {
    await context.factory.close();
    await context.tracker.stop();
  });

  tests('a signed comment event decides: the choice and the comment are kept, the run\'s comment says who, a replay decides nothing', async (context) => {
    const { tracker, factory } = context;
    const trigger = await gatedTrigger(context);
    const issue = tracker.addIssue('Ship the widget');
    const run = await waitingRun(context, trigger, issue);
    tracker.comment(issue, '/approve 2\nShip it', 'allowed');
    const answer = await tracker.deliver(`${context.hooks}/${trigger.id}`, issue, { secret });
    assert.equal(answer, { status: 200, body: { decided: true } });
    const done = await factory.waitForRun(run.id, ['succeeded']);
    assert.equal(done.steps[0]!.approval!.by, { name: tracker.allowedName, via: tracker.kind });
    assert.equal(done.steps[0]!.approval!.selected, ['2']);
    assert.is(done.steps[0]!.approval!.comment, 'Ship it');
    assert.is(done.steps[1]!.output, 'Green\n');
    await waitFor(() => /Approved by .*Grace Hopper|Approved by .*@alice/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the decision in the run\'s comment');
    assert.match(tracker.factoryComment(issue)!, /Ship it/);
    assert.is(tracker.commentCount(issue), 2, 'the run\'s comment and the command: no reply');
    const replay = await tracker.deliver(`${context.hooks}/${trigger.id}`, issue, { secret });
    assert.is(replay.status, 202);
    assert.match((await ledger(context, trigger.id))[0]!, /^already taken: comment \S+ was decided before$/);
    await factory.api.pollTrigger(trigger.id);
    assert.is((await factory.api.getRun(run.id))!.steps[0]!.approval!.at, done.steps[0]!.approval!.at, 'decided once');
  });

  tests('by its poll alone: /reject with a reason decides, and the run\'s comment says who rejected and why', async (context) => {
    const { tracker, factory } = context;
    const trigger = await gatedTrigger(context, { webhookSecret: '' });
    const issue = tracker.addIssue('Poll only');
    const run = await waitingRun(context, trigger, issue);
    tracker.comment(issue, '/reject\nneeds tests', 'allowed');
    await factory.api.pollTrigger(trigger.id);
    const done = await factory.waitForRun(run.id, ['rejected']);
    assert.equal(done.steps[0]!.approval, { approved: false, comment: 'needs tests', at: done.steps[0]!.approval!.at, by: { name: tracker.allowedName, via: tracker.kind } });
    await waitFor(() => /Rejected by/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the rejection in the run\'s comment');
    assert.match(tracker.factoryComment(issue)!, /needs tests/);
    assert.ok((await ledger(context, trigger.id)).some((line) => new RegExp(`^rejected step \`gate\` by ${tracker.allowedName}`).test(line)));
  });

  tests('only people allowed decide: the tracker\'s default, then only the approvers named; Factory\'s own comments never count', async (context) => {
    const { tracker, factory } = context;
    const trigger = await gatedTrigger(context);
    const issue = tracker.addIssue('Who may decide');
    const run = await waitingRun(context, trigger, issue);
    const url = `${context.hooks}/${trigger.id}`;
    tracker.comment(issue, '/approve 1', 'refused');
    assert.is((await tracker.deliver(url, issue, { secret })).status, 202);
    assert.match((await ledger(context, trigger.id))[0]!, /^ignored: \S.* (has no write access to acme\/app \(read\)|is a guest of the workspace, not a member|is neither the reporter nor the assignee of KAN-1)$/);
    await waitFor(() => /Not taken/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the refusal in the run\'s comment');
    tracker.comment(issue, '/approve 1', 'own');
    await tracker.deliver(url, issue, { secret });
    assert.match((await ledger(context, trigger.id))[0]!, /^ignored: comment \S+ is by Factory's own account/);
    assert.is((await factory.api.getRun(run.id))!.status, 'waiting');
    // Approvers named: only they decide, whatever the tracker would allow.
    await factory.api.saveTrigger({ ...trigger, approvers: ['someone-else@example.com'] });
    tracker.comment(issue, '/approve 1', 'allowed');
    await tracker.deliver(url, issue, { secret });
    assert.match((await ledger(context, trigger.id))[0]!, /is not among the approvers of this trigger$/);
    assert.is((await factory.api.getRun(run.id))!.status, 'waiting');
    await factory.api.saveTrigger({ ...trigger, approvers: [tracker.allowedHandle] });
    tracker.comment(issue, '/approve 1', 'allowed');
    assert.is((await tracker.deliver(url, issue, { secret })).status, 200);
    const done = await factory.waitForRun(run.id, ['succeeded']);
    assert.is(done.steps[0]!.approval!.by!.name, tracker.allowedName);
  });

  return tests;
}

trackerSuite('GitHub', githubTracker).run();
trackerSuite('Linear', linearTracker).run();
trackerSuite('Jira', jiraTracker).run();

// ─── GitHub: races, bad input, restarts, what a poll asks ───

const github = suite<Context<FakeGitHubIssue> & { fake: FakeGitHub; dir: string }>('approval commands: races, bad input and restarts (GitHub)');
github.before.each(async (context) => {
  const tracker = await githubTracker();
  // A data folder of the test's own: it outlives the restarts.
  Object.assign(context, { tracker, fake: tracker.fake, port: await freePort(), dir: makeTempDir('approval-commands') });
  await startFactory(context, context.dir);
  context.account = await context.factory.api.saveConnection(context.tracker.account);
});
github.after.each(async (context) => {
  await context.factory.close();
  await context.tracker.stop();
  removeTempDir(context.dir);
});

github('the app and a comment answer at once: exactly one decision, and the other is told who decided', async (context) => {
  const { tracker, factory } = context;
  const trigger = await gatedTrigger(context);
  const issue = tracker.addIssue('Race');
  const run = await waitingRun(context, trigger, issue);
  tracker.comment(issue, '/approve 1', 'allowed');
  const [app, comment] = await Promise.all([
    factory.api.approveStep(run.id, 'gate', true, 'from the app', ['2']).then(() => 'won', (error: Error) => error.message),
    tracker.deliver(`${context.hooks}/${trigger.id}`, issue, { secret }),
  ]);
  const done = await factory.waitForRun(run.id, ['succeeded']);
  const by = done.steps[0]!.approval!.by!;
  if (by.via === 'app') {
    assert.is(app, 'won');
    assert.is(comment.status, 202);
    assert.match((await ledger(context, trigger.id)).join('\n'), /already decided by You via app/);
    await waitFor(() => /already decided by You via app/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the loser told in the comment');
  } else {
    assert.equal(by, { name: '@alice', via: 'github' });
    assert.match(app, /is not waiting for approval \(it is \w+\): already decided by @alice via github$/);
    assert.is(comment.status, 200);
  }
  assert.equal(done.steps[0]!.approval!.selected, by.via === 'app' ? ['2'] : ['1'], 'one decision, whole');
});

github('a comment that decided first: the app is told who decided, in words', async (context) => {
  const { tracker, factory } = context;
  const trigger = await gatedTrigger(context);
  const issue = tracker.addIssue('Comment first');
  const run = await waitingRun(context, trigger, issue);
  tracker.comment(issue, '/approve 2', 'allowed');
  assert.is((await tracker.deliver(`${context.hooks}/${trigger.id}`, issue, { secret })).status, 200);
  const error = await factory.api.approveStep(run.id, 'gate', false, 'too late').then(() => undefined, (failure: Error) => failure.message);
  assert.match(error ?? '', /is not waiting for approval \(it is \w+\): already decided by @alice via github$/);
  assert.equal((await factory.waitForRun(run.id, ['succeeded'])).steps[0]!.approval!.by, { name: '@alice', via: 'github' });
});

github('a comment of a megabyte, 10,000 ids, choices that do not fit, and a run not waiting: nothing decided, the reason said once in the run\'s comment', async (context) => {
  const { tracker, factory } = context;
  const trigger = await gatedTrigger(context);
  const issue = tracker.addIssue('Bad input');
  const run = await waitingRun(context, trigger, issue);
  const url = `${context.hooks}/${trigger.id}`;
  const send = async (body: string) => {
    tracker.comment(issue, body, 'allowed');
    assert.is((await tracker.deliver(url, issue, { secret })).status, 202, body.slice(0, 40));
    return (await ledger(context, trigger.id))[0]!;
  };
  assert.match(await send(`/approve 2\n${'x'.repeat(1_000_000)}`), /^refused: \/approve 2 by @alice: its comment has 1,000,000 characters; an approval keeps at most 10,000$/);
  assert.match(await send(`/approve ${Array.from({ length: 10_000 }, (_, index) => index + 1).join(',')}`), /names more than 100 option ids; name at most 100$/);
  await waitFor(() => /name at most 100/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the last notice');
  assert.not.match(tracker.factoryComment(issue)!, /1,000,000/, 'only the last notice is kept');
  assert.match(await send('/approve 1,2'), /^not decided: Step `gate` takes exactly one choice, not 2/);
  assert.match(await send('/approve 9'), /^not decided: Step `gate` needs a choice to be approved: select one of 1 = Red, 2 = Green/);
  assert.match(await send('/approve'), /needs a choice/);
  assert.is((await factory.api.getRun(run.id))!.status, 'waiting', 'nothing decided');
  await factory.api.approveStep(run.id, 'gate', false, 'decided in the app');
  await factory.waitForRun(run.id, ['rejected']);
  assert.match(await send('/approve 2'), /^nothing waiting: run_\w+ is rejected \(already decided by You via app\); \/approve 2 by @alice not taken$/);
  await waitFor(() => /nothing is waiting for approval on this run/.test(tracker.factoryComment(issue) ?? ''), 5000, 'the nothing-waiting notice');
  const count = tracker.commentCount(issue);
  assert.is((await tracker.deliver(url, issue, { secret })).status, 202, 'the same comment again');
  assert.match((await ledger(context, trigger.id))[0]!, /^already taken/);
  assert.is(tracker.commentCount(issue), count, 'no reply, ever');
  assert.is(tracker.factoryComment(issue)!.match(/nothing is waiting/g)!.length, 1, 'said once');
});

github('a poll asks only about the issues whose run waits, one request each', async (context) => {
  const { tracker, factory, fake } = context;
  const trigger = await gatedTrigger(context, { webhookSecret: '' });
  const waiting = tracker.addIssue('Waits');
  const run = await waitingRun(context, trigger, waiting);
  const other = tracker.addIssue('Also here');
  await factory.api.pollTrigger(trigger.id);
  const second = (await factory.api.listRuns()).find((candidate) => candidate.id !== run.id)!;
  await factory.waitForRun(second.id, ['waiting']);
  await factory.api.approveStep(second.id, 'gate', true, undefined, ['1']);
  await factory.waitForRun(second.id, ['succeeded']);
  const before = fake.calls.length;
  await factory.api.pollTrigger(trigger.id);
  const asked = fake.calls.slice(before).filter((call) => /\/issues\/\d+\/comments$/.test(call.path) && call.method === 'GET');
  assert.equal(asked.map((call) => call.path), [`/repos/acme/app/issues/${waiting.number}/comments`]);
  assert.match(asked[0]!.query.since!, /^\d{4}-\d\d-\d\dT/);
  assert.ok(other);
});

github('an unsigned comment event decides only what the service says: a forged body decides nothing', async (context) => {
  const { tracker, factory, fake } = context;
  const trigger = await gatedTrigger(context, { webhookSecret: '' });
  const issue = tracker.addIssue('Unsigned');
  const run = await waitingRun(context, trigger, issue);
  // A body claiming alice approved, for a comment GitHub does not have.
  const forged = fake.payload('issue_comment', 'created', issue, { id: 999_999, body: '/approve 2' }, { sender: 'alice' });
  assert.is((await fake.deliver(`${context.hooks}/${trigger.id}`, 'issue_comment', forged)).status, 202);
  assert.is((await factory.api.getRun(run.id))!.status, 'waiting');
});

github('a restart between a command\'s arrival and its record: taken once, never deciding the next approval with the same comment', async (context) => {
  const { tracker } = context;
  const trigger = await gatedTrigger(context, { webhookSecret: '' }, [approval('first', 'One?'), approval('second', 'Two?'), shell('done', 'echo done')]);
  const issue = tracker.addIssue('Restart');
  const run = await waitingRun(context, trigger, issue);
  const { dir } = context;
  const file = join(dir, 'triggers', `${trigger.id}.json`);
  // Arrived while Factory was down (or before it wrote anything): the next poll takes it.
  await context.factory.close();
  const first = tracker.comment(issue, '/approve\nfirst one', 'allowed');
  await startFactory(context, dir);
  await context.factory.api.pollTrigger(trigger.id);
  await waitFor(async () => (await context.factory.api.getRun(run.id))!.steps[1]!.status === 'waiting', 5000, 'the second approval');
  assert.equal((await context.factory.api.getRun(run.id))!.steps[0]!.approval!.by, { name: '@alice', via: 'github' });
  // Stopped after approveStep but before the comment was written down as taken: it is under way.
  await context.factory.close();
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  assert.ok(stored.commands[first], 'taken');
  delete stored.commands[first];
  stored.commandsUnderWay = { [first]: `${run.id} first` };
  writeFileSync(file, JSON.stringify(stored));
  await startFactory(context, dir);
  await context.factory.api.pollTrigger(trigger.id);
  const after = (await context.factory.api.getRun(run.id))!;
  assert.is(after.steps[1]!.status, 'waiting', 'the second approval is not decided by the first comment');
  assert.match((await ledger(context, trigger.id))[0]!, /^taken before a restart: comment \d+ was deciding step `first`, which no longer waits$/);
  // Written down as under way, then stopped before approveStep: the step still waits, so it is taken now, once.
  await context.factory.close();
  const second = tracker.comment(issue, '/approve\nsecond one', 'allowed');
  const again = JSON.parse(readFileSync(file, 'utf8'));
  again.commandsUnderWay = { [second]: `${run.id} second` };
  writeFileSync(file, JSON.stringify(again));
  await startFactory(context, dir);
  await context.factory.api.pollTrigger(trigger.id);
  const done = await context.factory.waitForRun(run.id, ['succeeded']);
  assert.is(done.steps[1]!.approval!.comment, 'second one');
  await context.factory.api.pollTrigger(trigger.id);
  assert.is((await context.factory.api.getRun(run.id))!.steps[1]!.approval!.at, done.steps[1]!.approval!.at);
});

github.run();
