// Webhooks start only the runs they should: forged deliveries to an unsigned tracker trigger cannot
// spend the account's rate limit (one read per issue at a time, a budget per trigger); Linear's
// replay window uses only the signed body's time; a Jira webhook starts no runs for projects the
// trigger's query does not name.
import { createHmac } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ObservedIssue } from '../../src/triggers/provider';
import { jqlProjects } from '../../src/core/jql-projects';
import { UnsignedReads, defaultUnsignedReadLimits, overBudget } from '../../src/triggers/unsigned-webhooks';
import { FakeJira } from '../fakes/jira';
import { FakeLinear } from '../fakes/linear';
import { approval, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';

// ─── Reads for unsigned deliveries ───

const reads = suite('unsigned reads');

function issue(key: string): ObservedIssue {
  return { key, issue: { title: key, key } };
}

reads('one read per issue at a time and for ten seconds after; a failed read is not reused', async () => {
  let now = 1_000_000;
  const shared = new UnsignedReads(() => now);
  let fetches = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const fetch = async () => {
    fetches += 1;
    await held;
    return issue('ENG-1');
  };
  const answers = Array.from({ length: 50 }, () => shared.read('trg_a', 'ENG-1', fetch));
  release();
  assert.ok(answers.every((answer) => answer !== overBudget));
  assert.equal((await Promise.all(answers)).map((answer) => answer?.key), Array(50).fill('ENG-1'));
  assert.is(fetches, 1, 'fifty concurrent deliveries, one read');
  now += defaultUnsignedReadLimits.reuseMs - 1;
  await shared.read('trg_a', 'ENG-1', fetch);
  assert.is(fetches, 1, 'reused within ten seconds of the read');
  now += 1;
  await shared.read('trg_a', 'ENG-1', fetch);
  assert.is(fetches, 2, 'read again after ten seconds');
  await shared.read('trg_b', 'ENG-1', fetch);
  assert.is(fetches, 3, 'another trigger reads for itself');
  const failing = () => Promise.reject(new Error('Linear answered HTTP 500'));
  assert.is(await (shared.read('trg_a', 'ENG-2', failing) as Promise<unknown>).then(() => 'read', () => 'failed'), 'failed');
  await shared.read('trg_a', 'ENG-2', fetch);
  assert.is(fetches, 4, 'a failed read is asked again');
});

reads('a trigger reads at most thirty issues a minute; the budget refills evenly', async () => {
  let now = 1_000_000;
  const shared = new UnsignedReads(() => now);
  const answers = Array.from({ length: 50 }, (_, index) => shared.read('trg_a', `ENG-${index}`, async () => issue(`ENG-${index}`)));
  assert.is(answers.filter((answer) => answer !== overBudget).length, defaultUnsignedReadLimits.budget);
  assert.is(shared.read('trg_b', 'ENG-1', async () => issue('ENG-1')) === overBudget, false, 'each trigger has its own budget');
  now += defaultUnsignedReadLimits.refillMs / defaultUnsignedReadLimits.budget - 1;
  assert.is(shared.read('trg_a', 'ENG-100', async () => issue('ENG-100')), overBudget, 'not refilled yet');
  now += 1;
  assert.is.not(shared.read('trg_a', 'ENG-101', async () => issue('ENG-101')), overBudget, 'one read back after two seconds');
  assert.is(shared.read('trg_a', 'ENG-102', async () => issue('ENG-102')), overBudget);
  now += defaultUnsignedReadLimits.refillMs * 10;
  const refilled = Array.from({ length: 40 }, (_, index) => shared.read('trg_a', `OPS-${index}`, async () => issue(`OPS-${index}`)));
  assert.is(refilled.filter((answer) => answer !== overBudget).length, defaultUnsignedReadLimits.budget, 'a full bucket holds no more than the budget');
});

reads.run();

// ─── End to end with the fake Linear ───

interface Context {
  factory: TestFactory;
  fake: FakeLinear;
  hooks: string;
  pipelineId: string;
  accountId: string;
}

async function linearFactory(): Promise<Context> {
  const port = await freePort();
  const fake = await FakeLinear.start();
  const start = Date.now();
  // A clock that stands still: the budget does not refill while the test runs.
  const factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, now: () => start } });
  const account = await factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
  const pipeline = await factory.pipeline([approval('gate', 'Go?')]);
  return { factory, fake, hooks: `http://127.0.0.1:${port}/hooks`, pipelineId: pipeline.id, accountId: account.id };
}

function ledgerOf(context: Context, triggerId: string): Promise<string[]> {
  return context.factory.api.snapshot().then((snapshot) => snapshot.triggerStates[triggerId]!.ledger.map((entry) => entry.decision));
}

const linear = suite('unsigned linear deliveries');

linear('50 forged deliveries of one issue read it once; 50 of 50 issues read at most the budget, and the ledger names the drops', async () => {
  const context = await linearFactory();
  const { factory, fake } = context;
  try {
    const save = (name: string) => factory.api.saveTrigger({ name, kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.accountId, filter: { team: 'ENG' } });
    const one = await save('One issue');
    assert.is(one.webhookSecret, undefined, 'an unsigned trigger');
    const target = fake.addIssue({ title: 'Named fifty times' });
    const before = fake.callsOf('issue').length;
    const answers = await Promise.all(Array.from({ length: 50 }, () => fake.deliver(`${context.hooks}/${one.id}`, fake.webhookPayload('create', target))));
    assert.is(fake.callsOf('issue').length - before, 1, 'one GraphQL read for fifty deliveries');
    assert.equal(answers.map((answer) => answer.status).sort(), [...Array(49).fill(200), 201]);

    const many = await save('Many issues');
    const issues = Array.from({ length: 50 }, (_, index) => fake.addIssue({ title: `Forged ${index}` }));
    const start = fake.callsOf('issue').length;
    const spread = await Promise.all(issues.map((each) => fake.deliver(`${context.hooks}/${many.id}`, fake.webhookPayload('create', each))));
    const made = fake.callsOf('issue').length - start;
    assert.is(made, defaultUnsignedReadLimits.budget, 'at most the budget of reads');
    assert.is(spread.filter((answer) => answer.status === 201).length, made);
    assert.is(spread.filter((answer) => answer.status === 202).length, 50 - made, 'dropped deliveries are ignored (202)');
    const ledger = await ledgerOf(context, many.id);
    assert.is(ledger.filter((decision) => decision === 'dropped: too many unsigned deliveries; set a webhook secret').length, 50 - made);
  } finally {
    await factory.close();
    await fake.stop();
  }
});

// ─── Linear's replay window ───

linear('a signed delivery counts only the signed body’s webhookTimestamp, never the Linear-Timestamp header', async () => {
  const context = await linearFactory();
  const { factory, fake } = context;
  const secret = 'linear-signing-secret-0123456789';
  try {
    const trigger = await factory.api.saveTrigger({ name: 'Signed', kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.accountId, filter: { team: 'ENG' }, webhookSecret: secret });
    const target = fake.addIssue({ title: 'Replayed' });
    const send = async (payload: Record<string, unknown>, header: number) => {
      const body = JSON.stringify(payload);
      const response = await fetch(`${context.hooks}/${trigger.id}`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', 'Linear-Signature': createHmac('sha256', secret).update(body).digest('hex'), 'Linear-Timestamp': String(header) } });
      return response.status;
    };
    const { webhookTimestamp: _dropped, ...withoutTime } = fake.webhookPayload('create', target);
    assert.is(await send(withoutTime, Date.now()), 401, 'no signed time, a fresh header: refused');
    assert.is((await ledgerOf(context, trigger.id))[0], 'refused: the signed body has no webhookTimestamp, so its age cannot be checked (a replay is refused the same way)');
    assert.is(await send(fake.webhookPayload('create', target, undefined, Date.now() - 3600_000), Date.now()), 401, 'an hour-old signed time, a fresh header: refused');
    assert.match((await ledgerOf(context, trigger.id))[0]!, /^stale timestamp: 3600 s from now$/);
    assert.is(await send(fake.webhookPayload('create', target), Date.now() - 3600_000), 201, 'a fresh signed time: the header does not matter');
  } finally {
    await factory.close();
    await fake.stop();
  }
});

linear.run();

// ─── Jira: the projects a query names ───

const jql = suite('jql projects');

jql('plain project parts joined by AND give the projects; anything unsure gives no check', () => {
  const cases: [string, string[] | undefined][] = [
    ['project = ABC', ['ABC']],
    ['PROJECT=abc AND labels = agent', ['abc']],
    ['labels = agent AND project = "My Project" ORDER BY created DESC', ['My Project']],
    ["project in (ABC, 'DEF', \"G H\") and statusCategory != Done", ['ABC', 'DEF', 'G H']],
    ['project in (ABC, DEF) AND project = def', ['DEF']],
    ['project = ABC && labels = x', ['ABC']],
    ['summary ~ "a OR b" AND project = ABC', ['ABC']],
    ['project = ABC AND (labels = a OR labels = b)', ['ABC']],
    ['project = ABC OR project = DEF', undefined],
    ['project = ABC OR labels = x', undefined],
    ['labels = x || project = ABC', undefined],
    ['project = ABC AND labels = x OR labels = y', undefined],
    ['labels = x OR project = ABC AND project = DEF', undefined],
    ['(project = ABC OR project = DEF) AND labels = x', undefined],
    ['NOT project = ABC', undefined],
    ['project != ABC', undefined],
    ['project not in (ABC)', undefined],
    ['project = currentProject()', undefined],
    ['project in projectsLeadByUser()', undefined],
    ['project in (ABC,)', undefined],
    ['project = EMPTY', undefined],
    ['project = "ABC', undefined],
    ['labels = agent', undefined],
    ['', undefined],
  ];
  for (const [query, expected] of cases) assert.equal(jqlProjects(query), expected, query);
});

jql.run();

const jira = suite('jira webhook projects');

jira('a Jira webhook starts no runs for a project the query does not name; the ledger and the state say what is checked', async () => {
  const port = await freePort();
  const fake = await FakeJira.start({ mode: 'cloud' });
  const factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000 } });
  try {
    const account = await factory.api.saveConnection({ kind: 'jira', name: 'Acme', baseUrl: fake.url, email: fake.email, token: fake.token });
    const pipeline = await factory.pipeline([approval('gate', 'Go?')]);
    const save = (query: string, webhookSecret?: string) => factory.api.saveTrigger({ name: query, kind: 'jira', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { query }, ...(webhookSecret ? { webhookSecret } : {}) });
    const secret = 'jira-shared-secret-0123456789';
    const ours = fake.addIssue({ summary: 'Ours', project: 'KAN' });
    const theirs = fake.addIssue({ summary: 'Another team’s', project: 'OPS' });
    const kan = await save('project = KAN AND statusCategory != Done', secret);
    const either = await save('project = KAN OR project = OPS', secret);
    const deliver = (triggerId: string, target: typeof ours, token?: string) => fake.deliver(`http://127.0.0.1:${port}/hooks/${triggerId}`, fake.payload('jira:issue_created', target), token ? { token } : {});

    assert.is((await deliver(kan.id, theirs, secret)).status, 202);
    const decisions = (await factory.api.snapshot()).triggerStates[kan.id]!.ledger.map((entry) => `${entry.key} ${entry.decision}`);
    assert.is(decisions[0], `${theirs.key} ignored: in project OPS, not KAN as the query says`);
    assert.is((await deliver(kan.id, ours, secret)).status, 201);
    assert.is((await deliver(either.id, theirs, secret)).status, 201, 'an OR at the top level: no project check');

    // Unsigned: a forged body that claims project KAN for an OPS issue is read from Jira and refused.
    const unsigned = await save('project = KAN');
    const forged = fake.payload('jira:issue_created', theirs) as { issue: { fields: { project: Record<string, unknown> } } };
    forged.issue.fields.project = { key: 'KAN', name: 'KAN', id: '1' };
    assert.is((await fake.deliver(`http://127.0.0.1:${port}/hooks/${unsigned.id}`, forged)).status, 202);

    const states = (await factory.api.snapshot()).triggerStates;
    assert.equal(states[kan.id]!.webhookProjects, ['KAN']);
    assert.is(states[either.id]!.webhookProjects, undefined);
    assert.equal((await factory.api.listRuns()).map((run) => `${run.triggerId === kan.id ? 'kan' : 'either'} ${run.issue!.key}`).sort(), [`either ${theirs.key}`, `kan ${ours.key}`]);
  } finally {
    await factory.close();
    await fake.stop();
  }
});

jira.run();
