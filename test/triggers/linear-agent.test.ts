// Factory as a Linear agent (issue 27): a real Factory with its webhook server, an agent trigger on
// a Linear account, and the fake Linear sending signed AgentSessionEvent deliveries and keeping
// the session's activities (agentActivityCreate, agentSessionUpdate, inputs checked against
// Linear's schema).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ApprovalStep, ConnectionView, Step, TriggerConfig, TriggerInput } from '../../src/core/api';
import { readApprovalAnswer } from '../../src/triggers/linear-agent-answers';
import { FakeLinear, type FakeAgentSession, type RecordedCall } from '../fakes/linear';
import { rejects } from '../helpers/assert';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

process.env.PATH = `${resolve('test/fakes/bin')}:${process.env.PATH}`;

interface Context {
  factory: TestFactory;
  fake: FakeLinear;
  account: ConnectionView;
  hooks: string;
  dir: string;
  clock: { now: number | undefined };
}

const agent = suite<Context>('linear agent');
const secret = 'linear-agent-signing-secret-0123456789';

async function open(context: Context, overrides: Record<string, unknown> = {}): Promise<void> {
  const port = await freePort();
  const remote = await freePort();
  const now = () => context.clock.now ?? Date.now();
  context.factory = await startTestFactory({
    dir: context.dir, now,
    overrides: { webhookServer: { enabled: true, port }, remoteAccess: { enabled: true, port: remote }, ...overrides },
    triggerTuning: { firstPollDelayMs: 3600_000, now },
    linearOAuth: { authorizeUrl: `${context.fake.url}/oauth/authorize` },
  });
  context.hooks = `http://127.0.0.1:${port}/hooks`;
}

agent.before.each(async (context) => {
  context.clock = { now: undefined };
  context.dir = makeTempDir('factory-linear-agent');
  context.fake = await FakeLinear.start();
  await open(context);
  context.account = await context.factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: context.fake.url, token: context.fake.apiKey });
});
agent.after.each(async (context) => {
  await context.factory.close();
  await context.fake.stop();
  removeTempDir(context.dir);
});

async function agentTrigger(context: Context, steps: Step[], extra: Partial<TriggerInput> = {}): Promise<TriggerConfig> {
  const pipeline = await context.factory.pipeline(steps, { name: 'Fix it' });
  return context.factory.api.saveTrigger({ name: 'Factory agent', kind: 'linear', enabled: true, pipelineId: pipeline.id, connectionId: context.account.id, agent: true, webhookSecret: secret, ...extra });
}

function send(context: Context, triggerId: string, payload: Record<string, unknown>, options: Parameters<FakeLinear['deliver']>[2] = {}) {
  return context.fake.deliver(`${context.hooks}/${triggerId}`, payload, { secret, ...options });
}

/** The session's activities in a line each: `thought`, `action build`, `action build → Succeeded`, `elicitation (select)`. */
function shown(fake: FakeLinear, session: FakeAgentSession): string[] {
  return fake.agentActivities(session).map((activity) => {
    const { content } = activity;
    if (content.type === 'action') return `action ${content.action}${content.result ? ` → ${String(content.result).split(/[ :]/)[0]}` : ''}`;
    return `${content.type}${activity.signal ? ` (${activity.signal})` : ''}${activity.ephemeral ? ' (ephemeral)' : ''}`;
  });
}

function bodies(fake: FakeLinear, session: FakeAgentSession, type: string): string[] {
  return fake.agentActivities(session).filter((activity) => activity.content.type === type).map((activity) => String(activity.content.body));
}

function ledger(context: Context, triggerId: string): Promise<string[]> {
  return context.factory.api.snapshot().then((snapshot) => snapshot.triggerStates[triggerId]!.ledger.map((entry) => entry.decision));
}

async function started(context: Context, session: FakeAgentSession): Promise<string> {
  await waitFor(async () => (await context.factory.api.listRuns()).some((run) => run.agentSessionId === session.id), 10_000, 'the session\'s run');
  return (await context.factory.api.listRuns()).find((run) => run.agentSessionId === session.id)!.id;
}

function lastIs(fake: FakeLinear, session: FakeAgentSession, line: string): () => boolean {
  return () => shown(fake, session).at(-1) === line;
}

/** Delegates a new issue to a new agent trigger, and waits until the session's last activity is `until`. */
async function delegate(context: Context, steps: Step[], title: string, until: string, extra: Partial<TriggerInput> = {}) {
  const trigger = await agentTrigger(context, steps, extra);
  const session = context.fake.openAgentSession(context.fake.addIssue({ title }));
  await send(context, trigger.id, context.fake.agentSessionPayload('created', session));
  await waitFor(lastIs(context.fake, session, until), 10_000, `the session to show ${until}`);
  return { trigger, session, runId: await started(context, session) };
}

/** A person writes in the session (by default the session's creator, Grace Hopper). */
function say(context: Context, triggerId: string, session: FakeAgentSession, text: string, options: Parameters<FakeLinear['prompt']>[2] = {}) {
  return send(context, triggerId, context.fake.agentSessionPayload('prompted', session, context.fake.prompt(session, text, options)));
}

// ─── Created ───

agent('a delegated issue runs its pipeline: a first thought, an action as each step starts and ends, a response with the run link', async (context) => {
  const { fake, factory } = context;
  const trigger = await agentTrigger(context, [shell('build', 'echo "building {{issue.key}}: {{issue.title}}"'), shell('context', 'printf "%s" "{{issue.raw.promptContext}}" | head -c 40')]);
  const issue = fake.addIssue({ title: 'Add dark mode', description: 'Both themes' });
  const session = fake.openAgentSession(issue);
  assert.equal(await send(context, trigger.id, fake.agentSessionPayload('created', session)), { status: 201, body: { issue: issue.identifier, created: true } });
  await waitFor(() => fake.agentActivities(session).length > 0, 10_000, 'the first thought (Linear wants one within 10 s)');
  const runId = await started(context, session);
  const done = await factory.waitForRun(runId, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.agentSessionId, session.id);
  assert.is(done.steps[0]!.output!.trim(), `building ${issue.identifier}: Add dark mode`);
  assert.match(done.steps[1]!.output!, /^<issue identifier="ENG-1">/, 'the prompt context Linear composed reaches the run');
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the final response');
  assert.equal(shown(fake, session), ['thought', 'action build', 'action build → Succeeded', 'action context', 'action context → Succeeded', 'response']);
  const activities = fake.agentActivities(session);
  assert.is(activities[0]!.content.body, `Starting the pipeline **Fix it** on ${issue.identifier}: build → context.`);
  assert.is(activities[1]!.content.parameter, 'echo "building {{issue.key}}: {{issue.title}}"', 'what the step runs, as the pipeline says it');
  const url = `${factory.remote.status().url}/#/runs/${runId}`;
  assert.match(bodies(fake, session, 'response')[0]!, `Done: **Fix it** succeeded.\n\nRun: ${url}`);
  assert.equal(session.externalUrls, [{ label: 'Factory run', url }], 'the session links the run page');
  assert.ok(activities.every((activity) => /^[0-9a-f-]{36}$/.test(activity.id)), 'ids are chosen by Factory');
  assert.equal(await ledger(context, trigger.id), [`started ${runId} for agent session ${session.id}`]);
});

agent('the first thought does not wait for the run queue', async (context) => {
  const { fake, factory } = context;
  await factory.api.saveSettings({ maxParallelRuns: 1 });
  const blocker = await factory.pipeline([shell('block', 'sleep 30')], { name: 'Blocker' });
  const busy = await factory.api.startRun({ pipelineId: blocker.id });
  await factory.waitForRun(busy.id, ['running']);
  const trigger = await agentTrigger(context, [shell('build', 'echo built')]);
  const session = fake.openAgentSession(fake.addIssue({ title: 'Queued work' }));
  await send(context, trigger.id, fake.agentSessionPayload('created', session));
  await waitFor(() => shown(fake, session).length === 1, 10_000, 'the first thought');
  const runId = await started(context, session);
  assert.is((await factory.api.getRun(runId))!.status, 'queued', 'posted while the run still waits for a slot');
  await factory.api.cancelRun(busy.id);
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the run to end');
  assert.equal(shown(fake, session), ['thought', 'action build', 'action build → Succeeded', 'response']);
});

agent('a redelivered or concurrent created event starts one run and posts one thought', async (context) => {
  const { fake, factory } = context;
  const trigger = await agentTrigger(context, [shell('build', 'echo built')]);
  const session = fake.openAgentSession(fake.addIssue({ title: 'Once only' }));
  const payload = fake.agentSessionPayload('created', session);
  const answers = await Promise.all([send(context, trigger.id, payload, { deliveryId: 'd-1' }), send(context, trigger.id, payload, { deliveryId: 'd-2' })]);
  assert.equal(answers.map((answer) => answer.status).sort(), [200, 201]);
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the run to end');
  const again = await send(context, trigger.id, fake.agentSessionPayload('created', session), { deliveryId: 'd-1' });
  assert.equal(again, { status: 200, body: { issue: 'ENG-1', created: false } });
  assert.is((await factory.api.listRuns()).length, 1);
  assert.equal(shown(fake, session), ['thought', 'action build', 'action build → Succeeded', 'response']);
  assert.is((await ledger(context, trigger.id)).filter((line) => line.startsWith('already processed: agent session')).length, 2);
});

// ─── Answered in Linear ───

agent('an approval with choices is a select elicitation, and the chosen option decides it once', async (context) => {
  const { fake, factory } = context;
  const trigger = await agentTrigger(context, [approval('pick', 'Which part first for {{issue.key}}?', { mode: 'single', options: ['Runtime', 'Tests'] }), shell('after', 'echo "chose {{steps.pick.selected}}"')]);
  const session = fake.openAgentSession(fake.addIssue({ title: 'Choose' }));
  await send(context, trigger.id, fake.agentSessionPayload('created', session));
  await waitFor(lastIs(fake, session, 'elicitation (select)'), 10_000, 'the question');
  const [question] = fake.agentActivities(session).filter((activity) => activity.content.type === 'elicitation');
  assert.equal(question!.signalMetadata, { options: [{ label: 'Runtime', value: '1' }, { label: 'Tests', value: '2' }] });
  assert.match(String(question!.content.body), 'Which part first for ENG-1?');
  const prompt = fake.prompt(session, '2');
  const payload = fake.agentSessionPayload('prompted', session, prompt);
  assert.equal(await send(context, trigger.id, payload), { status: 200, body: { ok: true } });
  const runId = await started(context, session);
  const done = await factory.waitForRun(runId, ['succeeded', 'failed']);
  assert.is(done.steps[1]!.output!.trim(), 'chose Tests');
  const decided = done.steps[0]!.approval!;
  assert.equal([decided.approved, decided.selected, decided.by], [true, ['2'], { name: 'Grace Hopper', via: 'linear' }]);
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the end');
  assert.equal(shown(fake, session), ['thought', 'elicitation (select)', 'action pick → Approved', 'action after', 'action after → Succeeded', 'response']);
  assert.equal(await send(context, trigger.id, payload, { deliveryId: 'again' }), { status: 200, body: { created: false } }, 'a redelivered prompt decides nothing');
  assert.ok((await ledger(context, trigger.id)).includes(`already processed: prompt ${prompt.id}`));
});

agent('free text: approve and reject words decide with the rest as the comment; other text asks again', async (context) => {
  const { fake, factory } = context;
  const { trigger, session, runId } = await delegate(context, [approval('review', 'Ship it?'), shell('ship', 'echo shipped')], 'Review me', 'elicitation');
  await say(context, trigger.id, session, 'What does this change?');
  await waitFor(() => shown(fake, session).filter((line) => line === 'elicitation').length === 2, 10_000, 'the question asked again');
  assert.match(bodies(fake, session, 'elicitation')[1]!, 'Factory did not read “What does this change?” as a decision. Answer **approve** or **reject**');
  assert.is((await factory.api.getRun(runId))!.status, 'waiting', 'a question decides nothing');
  await say(context, trigger.id, session, 'Reject: not before the release');
  const done = await factory.waitForRun(runId, ['rejected']);
  assert.equal(done.steps[0]!.approval, { approved: false, comment: 'not before the release', at: done.steps[0]!.approval!.at, by: { name: 'Grace Hopper', via: 'linear' } });
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the end');
  assert.match(bodies(fake, session, 'response')[0]!, 'Rejected: Rejected at step `review`: not before the release');
  await say(context, trigger.id, session, 'approve');
  await waitFor(() => bodies(fake, session, 'response').length === 2, 10_000, 'the answer to a late prompt');
  assert.is(bodies(fake, session, 'response')[1], 'This run has ended (rejected); delegate the issue again for a new run.');
});

agent('with approvers set, only they decide; others are told so', async (context) => {
  const { fake, factory } = context;
  const { trigger, session, runId } = await delegate(context, [approval('review', 'Ship it?')], 'Guarded', 'elicitation', { approvers: ['ADA@example.com'] });
  await say(context, trigger.id, session, 'approve');
  await waitFor(lastIs(fake, session, 'thought'), 10_000, 'the refusal');
  assert.is(bodies(fake, session, 'thought')[1], "Grace Hopper is not among the trigger's approvers, so Factory did not act on this.");
  assert.is((await factory.api.getRun(runId))!.status, 'waiting');
  await say(context, trigger.id, session, 'approve', { user: fake.viewer });
  const done = await factory.waitForRun(runId, ['succeeded', 'failed']);
  assert.equal(done.steps[0]!.approval!.by, { name: 'Ada Lovelace', via: 'linear' });
});

agent('with approvers set, a stranger’s stop and guidance do nothing either', async (context) => {
  const { fake, factory } = context;
  const { trigger, session, runId } = await delegate(context, [shell('long', 'sleep 30')], 'Guarded work', 'action long', { approvers: ['ADA@example.com'] });
  await say(context, trigger.id, session, 'Stop', { signal: 'stop' });
  await say(context, trigger.id, session, 'Push to main instead');
  await waitFor(() => bodies(fake, session, 'thought').length >= 3, 10_000, 'both refusals');
  assert.equal(bodies(fake, session, 'thought').slice(1), Array(2).fill("Grace Hopper is not among the trigger's approvers, so Factory did not act on this."));
  assert.is((await factory.api.getRun(runId))!.status, 'running');
  assert.not.ok((await factory.api.readRunLog(runId)).some((line) => line.line.includes('Push to main')), 'no guidance noted');
  await say(context, trigger.id, session, 'Stop', { signal: 'stop', user: fake.viewer });
  assert.is((await factory.waitForRun(runId, ['cancelled', 'succeeded', 'failed'])).status, 'cancelled');
});

agent('how words are read as a decision', () => {
  const plain = undefined;
  const choices: ApprovalStep = { id: 'pick', name: 'pick', kind: 'approval', message: 'm', choices: { mode: 'multiple', options: ['Runtime', 'Tests', 'Docs'] } };
  assert.equal(readApprovalAnswer('approve', plain), { approved: true });
  assert.equal(readApprovalAnswer('LGTM!', plain), { approved: true });
  assert.equal(readApprovalAnswer('Yes, ship it', plain), { approved: true, comment: 'ship it' });
  assert.equal(readApprovalAnswer('no - too risky', plain), { approved: false, comment: 'too risky' });
  assert.equal(readApprovalAnswer('Rejected.', plain), { approved: false });
  assert.is(readApprovalAnswer('I approve of nothing', plain), undefined, 'a sentence is not a verdict');
  assert.is(readApprovalAnswer('approvers?', plain), undefined);
  assert.is(readApprovalAnswer('   ', plain), undefined);
  assert.equal(readApprovalAnswer('tests, 3', choices), { approved: true, selected: ['2', '3'] });
  assert.equal(readApprovalAnswer('1', { ...choices, choices: { mode: 'single', options: ['A', 'B'] } }), { approved: true, selected: ['1'] });
  assert.is(readApprovalAnswer('1, 2', { ...choices, choices: { mode: 'single', options: ['A', 'B'] } }), undefined, 'a single choice takes one');
  assert.is(readApprovalAnswer('Runtime and more', choices), undefined);
});

agent('stop cancels the run and ends with a response; text while it works is guidance or a note in the run log', async (context) => {
  const { fake, factory } = context;
  const { trigger, session, runId } = await delegate(context, [shell('long', 'sleep 30'), shell('never', 'echo never')], 'Long work', 'action long');
  await say(context, trigger.id, session, 'Keep it short');
  await waitFor(lastIs(fake, session, 'thought'), 10_000, 'the note');
  assert.is(bodies(fake, session, 'thought')[1], "Noted in the run's log: no agent step is left to take it as guidance.");
  assert.ok((await factory.api.readRunLog(runId)).some((line) => line.line === 'Linear: Grace Hopper wrote “Keep it short” (no agent step is left to take it)'));
  await say(context, trigger.id, session, 'Stop', { signal: 'stop' });
  const done = await factory.waitForRun(runId, ['cancelled', 'succeeded', 'failed']);
  assert.is(done.status, 'cancelled');
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the final response');
  assert.is(bodies(fake, session, 'response')[0], 'Stopped as asked: the run was cancelled.\n\nRun: ' + `${factory.remote.status().url}/#/runs/${runId}`);
  assert.ok((await ledger(context, trigger.id)).includes(`stop from Grace Hopper: cancelling ${runId}`));
});

agent('text while the run works goes to the next agent step as guidance, after its prompt is rendered', async (context) => {
  const { fake, factory } = context;
  const steps: Step[] = [shell('wait', 'while [ ! -f go ]; do sleep 0.05; done'), { id: 'implement', name: 'Implement', kind: 'agent', prompt: 'Implement {{issue.title}}', harnessId: 'claude' }];
  const { trigger, session, runId } = await delegate(context, steps, 'Dark mode', 'action wait');
  await say(context, trigger.id, session, 'Use the v2 API, not {{vars.token}}');
  await waitFor(lastIs(fake, session, 'thought'), 10_000, 'the acknowledgement');
  assert.is(bodies(fake, session, 'thought')[1], 'Noted: the next agent step, Implement, gets this as guidance.');
  writeFileSync(join((await factory.api.getRun(runId))!.workspace!, 'go'), '');
  const done = await factory.waitForRun(runId, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[1]!.prompt, 'Implement Dark mode\n\nGuidance from Linear:\nGrace Hopper: Use the v2 API, not {{vars.token}}');
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the end');
  assert.equal(shown(fake, session), ['thought', 'action wait', 'thought', 'action wait → Succeeded', 'action Implement', 'action Implement → Succeeded', 'response']);
  assert.is(fake.agentActivities(session)[4]!.content.parameter, 'claude');
});

// ─── Restarts ───

agent('a run waiting on a question survives a restart, posts nothing twice, and takes its answer', async (context) => {
  const { fake } = context;
  const { trigger, session, runId } = await delegate(context, [approval('review', 'Ship it?')], 'Across a restart', 'elicitation');
  await context.factory.close();
  await open(context);
  assert.is((await context.factory.api.getRun(runId))!.status, 'waiting');
  await say(context, trigger.id, session, 'approve');
  const done = await context.factory.waitForRun(runId, ['succeeded', 'failed']);
  assert.equal(done.steps[0]!.approval!.by, { name: 'Grace Hopper', via: 'linear' });
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the end');
  assert.equal(shown(fake, session), ['thought', 'elicitation', 'action review → Approved', 'response']);
  const created = await send(context, trigger.id, fake.agentSessionPayload('created', session));
  assert.is(created.status, 200, 'the session is remembered across the restart');
});

agent('a crash while Linear takes an activity: it is sent again under the same id, and nothing sent is sent twice', async (context) => {
  const { fake } = context;
  const dir = makeTempDir('factory-linear-agent-crash');
  const childPath = new URL('../engine/factory.child.mjs', import.meta.url).pathname;
  let child: ChildFactory | undefined;
  let release = () => {};
  try {
    child = await startChildFactory(childPath, dir);
    const port = await freePort();
    await child.call('saveSettings', { webhookServer: { enabled: true, port } });
    const { projects } = await child.call('snapshot');
    const pipeline = await child.call('savePipeline', { projectId: projects[0]!.id, name: 'Slow', variables: {}, steps: [shell('first', 'echo one'), shell('slow', 'sleep 30')] });
    const account = await child.call('saveConnection', { kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
    const trigger = await child.call('saveTrigger', { name: 'Agent', kind: 'linear', enabled: true, pipelineId: pipeline.id, connectionId: account.id, agent: true, webhookSecret: secret });
    const session = fake.openAgentSession(fake.addIssue({ title: 'Crash' }));
    const url = `http://127.0.0.1:${port}/hooks/${trigger.id}`;
    // Linear takes the slow step's start but its answer never reaches Factory (held from the start:
    // the step can start moments after the first one ends).
    const slowStart = (call: RecordedCall) => {
      const content = (call.variables.input as { content?: { type?: string; action?: string; result?: string } } | undefined)?.content;
      return call.fields.includes('agentActivityCreate') && content?.type === 'action' && content.action === 'slow' && content.result === undefined;
    };
    fake.hold(slowStart, new Promise((resolve) => (release = resolve)));
    assert.is((await fake.deliver(url, fake.agentSessionPayload('created', session), { secret })).status, 201);
    await waitFor(() => shown(fake, session).includes('action first → Succeeded'), 10_000, 'the first step to end');
    await waitFor(() => shown(fake, session).includes('action slow'), 10_000, 'Linear to have the slow step\'s start');
    const held = fake.agentActivities(session).at(-1)!;
    await child.kill('SIGKILL');
    release();
    child = await startChildFactory(childPath, dir);
    await waitFor(() => shown(fake, session).at(-1) === 'error', 10_000, 'the interrupted run\'s end');
    assert.equal(shown(fake, session), ['thought', 'action first', 'action first → Succeeded', 'action slow', 'error']);
    assert.match(bodies(fake, session, 'error')[0]!, 'The run failed: Factory stopped while it ran');
    const sends = (id: string) => fake.callsOf('agentActivityCreate').filter((call) => call.variables.input?.id === id).length;
    assert.is(sends(held.id), 2, 'the unanswered one was sent again, under its id');
    for (const activity of fake.agentActivities(session)) if (activity.id !== held.id) assert.is(sends(activity.id), 1, `${activity.content.type} sent once`);
  } finally {
    release();
    await child?.kill('SIGKILL').catch(() => undefined);
    removeTempDir(dir);
  }
});

// ─── Bad input ───

agent('another workspace, an unsigned or stale delivery and an unknown session are refused in words', async (context) => {
  const { fake, factory } = context;
  const trigger = await agentTrigger(context, [shell('build', 'echo built')]);
  const session = fake.openAgentSession(fake.addIssue({ title: 'Foreign' }));
  const foreign = { ...fake.agentSessionPayload('created', session), organizationId: 'org-2' };
  assert.equal(await send(context, trigger.id, foreign), { status: 400, body: { error: 'the session belongs to another Linear workspace (`org-2`), not the one of the account `Acme`' } });
  assert.equal((await send(context, trigger.id, fake.agentSessionPayload('created', session), { signature: null })).status, 401);
  assert.equal((await send(context, trigger.id, fake.agentSessionPayload('created', session, undefined, Date.now() - 300_000))).status, 401);
  const unknown = fake.openAgentSession(fake.addIssue({ title: 'Never created' }));
  assert.equal((await send(context, trigger.id, fake.agentSessionPayload('prompted', unknown, fake.prompt(unknown, 'approve')))).status, 202);
  assert.equal((await send(context, trigger.id, fake.webhookPayload('create', fake.addIssue({ title: 'An issue event' })))).status, 202);
  assert.equal((await ledger(context, trigger.id)).reverse(), [
    'refused: the session belongs to another Linear workspace (`org-2`), not the one of the account `Acme`',
    'invalid signature',
    'stale timestamp: 300 s from now',
    `ignored: a prompt in agent session ${unknown.id}, which Factory did not start`,
    'ignored: Issue event (an agent trigger takes agent session events only)',
  ], 'the ledger, oldest first');
  assert.is((await factory.api.listRuns()).length, 0);
  assert.is(fake.agentActivities(session).length, 0);
  await rejects(agentTrigger(context, [shell('x', 'true')], { webhookSecret: '' }), /An agent trigger needs the webhook signing secret/);
});

agent('an app installation: its sessions post with a token kept fresh; another app\'s session is refused', async (context) => {
  const { fake, factory } = context;
  const { authorizeUrl } = await factory.api.connectLinearAgent({ kind: 'linear', name: 'Acme agent', baseUrl: fake.url, oauth: { ...fake.oauthApp } });
  const callback = (await fetch(authorizeUrl, { redirect: 'manual' })).headers.get('location')!;
  assert.is((await fetch(callback)).status, 200, 'installed');
  const app = (await factory.api.snapshot()).accounts.find((account) => account.oauth)!;
  const trigger = await agentTrigger(context, [shell('build', 'echo built')], { connectionId: app.id });
  const session = fake.openAgentSession(fake.addIssue({ title: 'As the app' }));
  const other = { ...fake.agentSessionPayload('created', session), oauthClientId: 'client_someone_else' };
  assert.equal(await send(context, trigger.id, other), { status: 400, body: { error: `the session belongs to another Linear app (client \`client_someone_else\`), not the one installed as \`Acme agent\`` } });
  fake.revokeAccessTokens(); // Linear no longer takes the token it issued: the first call refreshes it
  assert.is((await send(context, trigger.id, fake.agentSessionPayload('created', session))).status, 201);
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the run to end');
  assert.equal(shown(fake, session), ['thought', 'action build', 'action build → Succeeded', 'response']);
  assert.match(String(fake.callsOf('agentActivityCreate').at(-1)!.headers.authorization), /^Bearer /, 'posted as the app');
});

agent('a long step tells the session at most once a minute how it is doing (injected clock)', async (context) => {
  const { fake, factory, clock } = context;
  const trigger = await agentTrigger(context, [shell('long', 'while [ ! -f go ]; do echo tick; sleep 0.02; done')]);
  const session = fake.openAgentSession(fake.addIssue({ title: 'Long output' }));
  const logs = factory.record('logs');
  const start = Date.now();
  clock.now = start;
  await send(context, trigger.id, fake.agentSessionPayload('created', session));
  await waitFor(lastIs(fake, session, 'action long'), 10_000, 'the step to start');
  const runId = await started(context, session);
  /** Moves the clock and waits until output made after the move was seen. */
  const at = async (seconds: number) => {
    clock.now = start + seconds * 1000;
    const seen = logs.length;
    await waitFor(() => logs.length > seen + 1, 10_000, 'more output');
  };
  const progress = () => shown(fake, session).filter((line) => line === 'thought (ephemeral)').length;
  for (const seconds of [10, 30, 59]) await at(seconds);
  assert.is(progress(), 0, 'nothing within the first minute');
  await at(61);
  await waitFor(() => progress() === 1, 10_000, 'the first progress update');
  for (const seconds of [80, 100, 120]) await at(seconds);
  assert.is(progress(), 1, 'one update for the second minute so far');
  await at(122);
  await waitFor(() => progress() === 2, 10_000, 'the second update');
  assert.match(bodies(fake, session, 'thought').at(-1)!, /^Still working on long \(2 min 2 s, [\d,]+ lines of output so far\)\.$/);
  writeFileSync(join((await factory.api.getRun(runId))!.workspace!, 'go'), '');
  await waitFor(lastIs(fake, session, 'response'), 10_000, 'the end');
  assert.is(progress(), 2);
});

agent.run();
