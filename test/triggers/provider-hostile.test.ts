// Trackers that misbehave as real servers (or proxies in front of them) do, against a real Factory:
// errors that echo the request's credentials, rate-limit resets a month ahead, pages without end,
// a next page on another origin, Data Center capping its page size, `isLast` with a next-page
// token, and ETags of a poll of several pages. Every fake is a real HTTP server on 127.0.0.1.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Connection, ConnectionInput, ConnectionView, TriggerConfig, TriggerInput } from '../../src/core/api';
import type { CommentDocument } from '../../src/triggers/comment-text';
import { ProviderError, type WriteBackTarget } from '../../src/triggers/provider';
import { maxPagesPerPoll } from '../../src/triggers/paging';
import { githubProvider } from '../../src/triggers/providers/github';
import { jiraProvider } from '../../src/triggers/providers/jira';
import { maxRateLimitPauseMs } from '../../src/triggers/poller';
import { providerRefusedAnswer } from '../../src/triggers/triggers';
import { FakeGitHub, githubErrors } from '../fakes/github';
import { FakeJira } from '../fakes/jira';
import { FakeLinear, linearErrors } from '../fakes/linear';
import { FakeNotifyServer } from '../fakes/notify-servers';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort, withTimeout } from '../helpers/net';
import { connectEventStream } from '../helpers/sse-client';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const repo = 'acme/app';
const day = 86_400_000;

/** One tracker behind a fake: how to reach it, and how to make it misbehave. */
interface Tracker {
  kind: 'github' | 'jira' | 'linear';
  /** The service's name in Factory's messages. */
  service: string;
  connection(): ConnectionInput;
  filter: TriggerInput['filter'];
  /** Every form the credentials could leak in. */
  secrets(): string[];
  /** Adds an issue; returns a function that delivers an unsigned webhook about it to `url`. */
  addIssue(title: string): (url: string) => Promise<{ status: number; body: unknown }>;
  /** From now on every request is answered with an error that echoes the request's headers. */
  echoCredentials(): void;
  /** The next listing request is answered with a rate limit lifting `aheadMs` from now. */
  rateLimit(aheadMs: number): void;
  /** How many listing requests (poll pages) the fake has seen. */
  listings(): number;
  /**
   * From now on each listing page points to a next one: a fresh cursor each time, or (`same`) the
   * cursor of the page just asked for.
   */
  pageForever(same: boolean): void;
  /** Listing requests are answered only once `release` resolves. */
  holdListings(release: Promise<void>): void;
  stop(): Promise<void>;
}

/** A proxy's error page quoting what it was sent: the Authorization header raw, decoded and URL-encoded, then every header. */
function echoOf(headers: Record<string, unknown>): string {
  const authorization = String(headers.authorization ?? '');
  const [scheme, credentials = ''] = authorization.split(' ');
  const decoded = /^basic$/i.test(scheme ?? '') ? Buffer.from(credentials, 'base64').toString('utf8') : '';
  return `Authorization: ${authorization} (${decoded}) ${encodeURIComponent(authorization)} ${encodeURIComponent(credentials)} ${JSON.stringify(headers)}`;
}

/** Each form the credential `authorization` (an Authorization header's value) and `token` travel in. */
function formsOf(token: string, authorization: string): string[] {
  const credentials = authorization.split(' ').at(-1)!;
  return [...new Set([token, encodeURIComponent(token), Buffer.from(token).toString('base64'), credentials, encodeURIComponent(credentials), authorization])];
}

async function github(): Promise<Tracker> {
  const fake = await FakeGitHub.start();
  fake.addRepo(repo);
  const listing = (call: { method: string; path: string }) => call.method === 'GET' && call.path === `/repos/${repo}/issues`;
  return {
    kind: 'github', service: 'GitHub', filter: { repo },
    connection: () => ({ kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token }),
    secrets: () => formsOf(fake.token, `Bearer ${fake.token}`),
    addIssue(title) {
      const issue = fake.addIssue(repo, { title });
      return (url) => fake.deliver(url, 'issues', fake.payload('issues', 'opened', issue));
    },
    echoCredentials() {
      fake.misbehave = (call) => ({ status: 401, body: { message: `Bad credentials: ${echoOf(call.headers)}`, documentation_url: 'https://docs.github.com/rest' } });
    },
    rateLimit(aheadMs) {
      fake.script(githubErrors.rateLimited(Math.floor((Date.now() + aheadMs) / 1000)), listing);
    },
    listings: () => fake.calls.filter(listing).length,
    pageForever(same) {
      fake.misbehave = (call, answer) => {
        if (!listing(call)) return answer;
        const page = Number(call.query.page ?? 1);
        const next = new URLSearchParams({ ...call.query, page: String(same ? page : page + 1) });
        return { ...answer, headers: { ...answer.headers, link: `<${fake.url}${call.path}?${next}>; rel="next"` } };
      };
    },
    holdListings(release) {
      fake.hold(listing, release);
    },
    stop: () => fake.stop(),
  };
}

async function jira(mode: 'cloud' | 'datacenter'): Promise<Tracker> {
  const fake = await FakeJira.start({ mode });
  const cloud = mode === 'cloud';
  const listing = (call: { path: string }) => call.path.startsWith('/rest/api/') && /\/search(\/jql)?$/.test(call.path);
  return {
    kind: 'jira', service: 'Jira', filter: { query: 'project = KAN' },
    connection: () => ({ kind: 'jira', name: 'Acme', baseUrl: fake.url, token: fake.token, ...(cloud ? { email: fake.email } : {}) }),
    secrets: () => formsOf(fake.token, cloud ? `Basic ${Buffer.from(`${fake.email}:${fake.token}`).toString('base64')}` : `Bearer ${fake.token}`),
    addIssue(title) {
      const issue = fake.addIssue({ project: 'KAN', summary: title });
      return (url) => fake.deliver(url, fake.payload('jira:issue_created', issue));
    },
    echoCredentials() {
      // Jira's 401 is an HTML page (Data Center) or plain text (Cloud): the error quotes its text.
      fake.misbehave = (call) => ({ status: 401, body: `<html><body><h1>Unauthorized (401)</h1><p>${echoOf(call.headers)}</p></body></html>` });
    },
    rateLimit(aheadMs) {
      fake.script({ status: 429, body: { errorMessages: ['Rate limit exceeded.'], errors: {} }, headers: { 'Retry-After': String(Math.round(aheadMs / 1000)), 'X-RateLimit-Remaining': '0' } }, listing);
    },
    listings: () => fake.calls.filter(listing).length,
    pageForever(same) {
      let page = 0;
      fake.misbehave = (call, answer) => {
        if (!listing(call)) return answer;
        page += 1;
        if (cloud) return { status: 200, body: { issues: [], nextPageToken: same ? 'the-same-token' : `token-${page}`, isLast: false } };
        // Data Center: a total that is never reached, and a page that starts where it was asked.
        return { status: 200, body: { startAt: Number(call.query.startAt ?? 0), maxResults: 100, total: Number.MAX_SAFE_INTEGER, issues: same ? [] : [{ id: String(page), key: `KAN-${page}`, fields: { summary: 'Again' } }] } };
      };
    },
    holdListings(release) {
      fake.hold(listing, release);
    },
    stop: () => fake.stop(),
  };
}

async function linear(): Promise<Tracker> {
  const fake = await FakeLinear.start();
  const listing = (call: { fields: string[] }) => call.fields.includes('issues');
  return {
    kind: 'linear', service: 'Linear', filter: { team: 'ENG' },
    connection: () => ({ kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey }),
    secrets: () => formsOf(fake.apiKey, fake.apiKey),
    addIssue(title) {
      const issue = fake.addIssue({ title });
      return (url) => fake.deliver(url, fake.webhookPayload('create', issue));
    },
    echoCredentials() {
      fake.misbehave = ({ headers }) => {
        const echo = echoOf(headers);
        return { status: 500, body: { errors: [{ message: `Internal error for ${echo}`, extensions: { code: 'INTERNAL_SERVER_ERROR', type: 'internal error', userPresentableMessage: `Something failed for ${echo}` } }] } };
      };
    },
    rateLimit(aheadMs) {
      fake.script(linearErrors.rateLimited(Date.now() + aheadMs), listing);
    },
    listings: () => fake.callsOf('issues').length,
    pageForever(same) {
      let page = 0;
      fake.misbehave = (request, answer) => {
        const issues = (answer.body as { data?: { issues?: { nodes: unknown[] } } } | undefined)?.data?.issues;
        if (!issues) return answer;
        page += 1;
        return { ...answer, body: { data: { issues: { nodes: issues.nodes, pageInfo: { hasNextPage: true, endCursor: same ? 'the-same-cursor' : `cursor-${page}` } } } } };
      };
    },
    holdListings(release) {
      fake.hold(listing, release);
    },
    stop: () => fake.stop(),
  };
}

const trackers: [string, () => Promise<Tracker>][] = [
  ['GitHub', github],
  ['Jira Cloud', () => jira('cloud')],
  ['Jira Data Center', () => jira('datacenter')],
  ['Linear', linear],
];

interface Setup {
  tracker: Tracker;
  factory: TestFactory;
  account: ConnectionView;
  trigger: TriggerConfig;
  dir: string;
}

/**
 * A Factory (with the webhook server and `overrides`) and one saved trigger of the tracker's kind,
 * without a webhook secret (so a delivery makes Factory read the issue from the service).
 */
async function setUp(makeTracker: () => Promise<Tracker>, options: { overrides?: Record<string, unknown>; firstPollDelayMs?: number } = {}): Promise<Setup & { hooks: string }> {
  const tracker = await makeTracker();
  const port = await freePort();
  const dir = makeTempDir('factory-hostile');
  let factory: TestFactory | undefined;
  try {
    factory = await startTestFactory({ dir, overrides: { webhookServer: { enabled: true, port }, ...options.overrides }, triggerTuning: { firstPollDelayMs: options.firstPollDelayMs ?? 10 * 3600_000 } });
    const account = await factory.api.saveConnection(tracker.connection());
    const pipeline = await factory.pipeline([shell('say', 'echo "{{issue.key}}"')]);
    const trigger = await factory.api.saveTrigger({ name: 'Hostile', kind: tracker.kind, enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: tracker.filter });
    return { tracker, factory, account, trigger, dir, hooks: `http://127.0.0.1:${port}/hooks` };
  } catch (error) {
    await factory?.close();
    await tracker.stop();
    removeTempDir(dir);
    throw error;
  }
}

async function tearDown(setup: Setup): Promise<void> {
  await setup.factory.close();
  await setup.tracker.stop();
  removeTempDir(setup.dir);
}

/** The text of every file under `dir`, by path. */
function filesUnder(dir: string): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): [string, string][] => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [[path, readFileSync(path, 'utf8')]];
  });
}

function assertClean(text: string, secrets: string[], where: string): void {
  for (const secret of secrets) assert.not.ok(text.includes(secret), `${where} holds a credential (${secret.slice(0, 12)}…): ${text.slice(0, 400)}`);
}

// ─── Credentials echoed in errors ───

const leaks = suite('echoed credentials');

for (const [name, makeTracker] of trackers) {
  leaks(`${name}: an error page that echoes the Authorization header leaks it into no answer, event, message or file`, async () => {
    const remotePort = await freePort();
    const notify = await FakeNotifyServer.start();
    const setup = await setUp(makeTracker, { overrides: { remoteAccess: { enabled: true, port: remotePort } } });
    const { tracker, factory, account, trigger, dir, hooks } = setup;
    try {
      const secrets = tracker.secrets();
      await factory.api.saveChannel({ kind: 'webhook', name: 'Ops', url: notify.url('/hook'), enabled: true, events: ['trigger.error'] });
      const bearer = new URL(factory.remote.pairingLink()!).searchParams.get('t')!;
      const stream = await connectEventStream(`http://127.0.0.1:${remotePort}/api/events`, { headers: { Authorization: `Bearer ${bearer}` } });
      const deliver = tracker.addIssue('Echo me');
      tracker.echoCredentials();
      try {
        const state = await factory.api.pollTrigger(trigger.id);
        assert.match(state.lastError ?? '', new RegExp(tracker.service), 'the poll failed in the service’s words');
        assert.match(state.lastError!, /\*\*\*/, 'the echo is there, its credentials scrubbed');
        assertClean(state.lastError!, secrets, 'lastError');

        const { token: _token, ...stored } = tracker.connection();
        const tested = await factory.api.testConnection({ ...stored, id: account.id });
        assert.is(tested.ok, false);
        assertClean(JSON.stringify(tested), secrets, 'testConnection');
        const preview = await factory.api.testTrigger({ name: 'Preview', kind: tracker.kind, enabled: true, pipelineId: trigger.pipelineId, connectionId: account.id, filter: tracker.filter });
        assert.is(preview.ok, false);
        assertClean(JSON.stringify(preview), secrets, 'testTrigger');

        const answer = await deliver(`${hooks}/${trigger.id}`);
        assert.equal(answer, { status: 400, body: { error: providerRefusedAnswer } }, 'an anonymous sender learns nothing of the service’s words');
        const snapshot = await factory.api.snapshot();
        const ledger = snapshot.triggerStates[trigger.id]!.ledger.map((entry) => entry.decision);
        assert.ok(ledger.some((decision) => decision.startsWith('error: ') && decision.includes(tracker.service)), `the full error is in the ledger: ${ledger.join(' | ')}`);
        assertClean(JSON.stringify(snapshot), secrets, 'the snapshot');

        await waitFor(() => notify.to('/hook').length > 0, 10_000, 'the trigger.error message');
        assert.match(notify.to('/hook')[0]!.body, /trigger\.error/);
        assertClean(JSON.stringify(notify.requests), secrets, 'the channel message');
        await stream.waitFor((current) => current.text.includes('trigger.error') && current.text.includes('lastError'), 10_000);
        assertClean(stream.text, secrets, 'the event stream');
      } finally {
        stream.close();
      }
      await factory.stop();
      const files = filesUnder(dir).filter(([path]) => !/config\.json/.test(path));
      assert.ok(files.some(([path]) => path.endsWith('inbox.jsonl')), 'the inbox was written');
      assert.ok(files.some(([path]) => path.includes(join('triggers', trigger.id))), 'the trigger’s file was written');
      for (const [path, text] of files) assertClean(text, secrets, path);
    } finally {
      await tearDown(setup);
      await notify.close();
    }
  });
}

leaks.run();

// ─── Rate limits far ahead ───

const limits = suite('rate limits far ahead');

const farAhead: [string, () => Promise<Tracker>, number][] = [
  ['GitHub x-ratelimit-reset 30 days ahead', github, 30 * day],
  ['Jira Retry-After of 25 days', () => jira('cloud'), 25 * day],
  ['Linear reset 30 days ahead', linear, 30 * day],
];

for (const [name, makeTracker, aheadMs] of farAhead) {
  limits(`${name}: polling pauses for an hour, not a month and not a millisecond, and says until when`, async () => {
    // The first poll of a trigger waits 30 minutes here: only the pause can put the next one later.
    const setup = await setUp(makeTracker, { firstPollDelayMs: 30 * 60_000 });
    const { tracker, factory, trigger } = setup;
    try {
      tracker.rateLimit(aheadMs);
      const listed = tracker.listings(); // Jira's check of the query when the trigger was saved is a search too
      const before = Date.now();
      const state = await factory.api.pollTrigger(trigger.id);
      const after = Date.now();
      assert.is(tracker.listings() - listed, 1);
      assert.ok(state.rateLimitedUntil! >= before + maxRateLimitPauseMs && state.rateLimitedUntil! <= after + maxRateLimitPauseMs, `paused until ${new Date(state.rateLimitedUntil!).toISOString()}`);
      const next = (await factory.api.snapshot()).triggerStates[trigger.id]!.nextPollAt!;
      assert.is(next, state.rateLimitedUntil, 'the next poll is due when the pause ends');
      const until = new Date(state.rateLimitedUntil!).toISOString().replace(/[.]/g, '\\.');
      assert.match(state.lastError!, new RegExp(`^Rate limited until ${until} \\(${tracker.service} named \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z; Factory asks again after 60 minutes and reads the reset anew\\): ${tracker.service}'s rate limit was reached`));
      const skipped = await factory.api.pollTrigger(trigger.id);
      assert.is(skipped.rateLimitedUntil, state.rateLimitedUntil);
      assert.is(tracker.listings() - listed, 1, 'no request while paused');
    } finally {
      await tearDown(setup);
    }
  });
}

limits.run();

// ─── Pages without end ───

const paging = suite('pages without end');

for (const [name, makeTracker] of trackers) {
  paging(`${name}: a next page every time ends the poll after ${maxPagesPerPoll} pages, in words`, async () => {
    const setup = await setUp(makeTracker);
    const { tracker, factory, trigger } = setup;
    try {
      tracker.addIssue('The only issue');
      tracker.pageForever(false);
      const listed = tracker.listings();
      const state = await withTimeout(factory.api.pollTrigger(trigger.id), 'the poll to end', 20_000);
      assert.is(state.lastError, `${tracker.service} kept sending more pages: the poll stopped after ${maxPagesPerPoll} pages (10,000 issues). Narrow the trigger's filter if it really matches that many issues`);
      assert.is(tracker.listings() - listed, maxPagesPerPoll);
    } finally {
      await tearDown(setup);
    }
  });

  // Data Center pages by offset, advanced by the issues returned: no answer can make it ask for the same page again.
  if (name !== 'Jira Data Center') paging(`${name}: a next page that is the page just read ends the poll`, async () => {
    const setup = await setUp(makeTracker);
    const { tracker, factory, trigger } = setup;
    try {
      tracker.addIssue('The only issue');
      tracker.pageForever(true);
      const listed = tracker.listings();
      const state = await factory.api.pollTrigger(trigger.id);
      assert.match(state.lastError ?? '', new RegExp(`^${tracker.service} sent the same next page again after \\d pages, so the poll stopped there`));
      assert.ok(tracker.listings() - listed <= 2, `${tracker.listings() - listed} requests`);
    } finally {
      await tearDown(setup);
    }
  });

  paging(`${name}: stopping Factory aborts a poll in flight`, async () => {
    const setup = await setUp(makeTracker);
    const { tracker, factory, trigger } = setup;
    let release = () => {};
    try {
      tracker.addIssue('Held');
      tracker.holdListings(new Promise<void>((resolve) => (release = resolve)));
      const listed = tracker.listings();
      const polled = factory.api.pollTrigger(trigger.id);
      await waitFor(() => tracker.listings() === listed + 1, 5000, 'the held listing request');
      await withTimeout(factory.stop(), 'Factory to stop with a request held', 5000);
      await withTimeout(polled, 'pollTrigger to answer', 5000);
      release();
      assert.is(tracker.listings(), listed + 1, 'no request after the stop');
    } finally {
      release();
      await tearDown(setup);
    }
  });
}

paging.run();

// ─── The mutation audit: paging as real servers do it ───

const audit = suite('paging as real servers do it');

function githubSetup(fake: FakeGitHub): { connection: Connection; trigger: TriggerConfig } {
  return {
    connection: { id: 'con_1', kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token },
    trigger: { id: 'trg_1', name: 'Repo', kind: 'github', enabled: true, pipelineId: 'pl_1', connectionId: 'con_1', filter: { repo } } as TriggerConfig,
  };
}

/** Every page of a poll, and the cursor it returns. */
async function drain(pages: AsyncGenerator<{ key: string }[], string | undefined>): Promise<{ keys: string[]; cursor: string | undefined }> {
  const keys: string[] = [];
  for (let page = await pages.next(); ; page = await pages.next()) {
    if (page.done) return { keys, cursor: page.value };
    keys.push(...page.value.map((observed) => observed.key));
  }
}

audit('GitHub: an incremental poll of several pages keeps the first page’s ETag, so an idle repository answers 304 to one request', async () => {
  const fake = await FakeGitHub.start();
  try {
    const { connection, trigger } = githubSetup(fake);
    const issues = Array.from({ length: 150 }, (_, index) => fake.addIssue(repo, { title: `Issue ${index + 1}` }));
    const at = issues.at(-1)!.updated_at;
    for (const issue of issues) issue.updated_at = at; // one bulk edit: all changed in the same second
    const full = await drain(githubProvider.poll(trigger, connection));
    assert.is(full.keys.length, 150);
    const incremental = await drain(githubProvider.poll(trigger, connection, full.cursor));
    const lists = fake.callsTo('GET', `/repos/${repo}/issues`);
    assert.equal(lists.slice(-2).map((call) => [call.status, call.query.page]), [[200, undefined], [200, '2']], 'the incremental poll read two pages');
    assert.match(incremental.cursor!, /"etag"/);
    const calls = fake.calls.length;
    const idle = await drain(githubProvider.poll(trigger, connection, incremental.cursor));
    assert.equal(fake.calls.slice(calls).map((call) => call.status), [304], 'one conditional request, answered 304');
    assert.is(idle.cursor, incremental.cursor);
  } finally {
    await fake.stop();
  }
});

audit('GitHub: a next page on another origin is not followed with the token; the poll stops and says why', async () => {
  const fake = await FakeGitHub.start();
  const elsewhere = await FakeGitHub.start();
  const factory = await startTestFactory({ triggerTuning: { firstPollDelayMs: 10 * 3600_000 } });
  try {
    fake.addRepo(repo);
    for (let index = 0; index < 3; index++) fake.addIssue(repo, { title: `Issue ${index}` });
    fake.misbehave = (call, answer) => (call.path === `/repos/${repo}/issues` ? { ...answer, headers: { ...answer.headers, link: `<${elsewhere.url}/repos/${repo}/issues?page=2>; rel="next"` } } : answer);
    const account = await factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token });
    const pipeline = await factory.pipeline([shell('say', 'echo "{{issue.key}}"')]);
    const saved = await factory.api.saveTrigger({ name: 'Linked away', kind: 'github', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { repo } });
    const state = await factory.api.pollTrigger(saved.id);
    assert.is(state.lastError, `GitHub's next page is on another site (${elsewhere.url}), not the API's (${fake.url}): Factory does not send the token there, so the listing stopped. Is the API address right?`);
    assert.is(elsewhere.calls.length, 0, 'the other origin was never asked');
  } finally {
    await factory.close();
    await fake.stop();
    await elsewhere.stop();
  }
});

audit('Jira Data Center: a server that caps maxResults below what was asked is paged by the issues it returned', async () => {
  const fake = await FakeJira.start({ mode: 'datacenter' });
  try {
    fake.searchLimit = 20;
    for (let index = 1; index <= 50; index++) fake.addIssue({ project: 'KAN', summary: `Issue ${index}` });
    const connection: Connection = { id: 'con_1', kind: 'jira', name: 'DC', baseUrl: fake.url, token: fake.token, account: { id: 'ada', name: 'Ada', server: 'Jira Data Center 9.12.15' } };
    const trigger = { id: 'trg_1', name: 'DC', kind: 'jira', enabled: true, pipelineId: 'pl_1', connectionId: 'con_1', filter: { query: 'project = KAN' } } as TriggerConfig;
    const { keys } = await drain(jiraProvider.poll(trigger, connection));
    assert.is(new Set(keys).size, 50, 'every issue, none skipped');
    assert.equal(fake.calls.map((call) => [call.query.startAt, call.query.maxResults]), [['0', '100'], ['20', '100'], ['40', '100']]);
  } finally {
    await fake.stop();
  }
});

audit('Jira Cloud: isLast true ends the search even when a nextPageToken comes with it', async () => {
  const fake = await FakeJira.start({ mode: 'cloud' });
  try {
    for (let index = 1; index <= 3; index++) fake.addIssue({ project: 'KAN', summary: `Issue ${index}` });
    fake.misbehave = (call, answer) => {
      const body = answer.body as { isLast?: boolean } | undefined;
      return call.path.endsWith('/search/jql') && body?.isLast === true ? { ...answer, body: { ...body, nextPageToken: Buffer.from('o0').toString('base64url') } } : answer;
    };
    const connection: Connection = { id: 'con_1', kind: 'jira', name: 'Cloud', baseUrl: fake.url, token: fake.token, email: fake.email, account: { id: 'ada', name: 'Ada', server: 'Jira Cloud' } };
    const trigger = { id: 'trg_1', name: 'Cloud', kind: 'jira', enabled: true, pipelineId: 'pl_1', connectionId: 'con_1', filter: { query: 'project = KAN' } } as TriggerConfig;
    const { keys } = await drain(jiraProvider.poll(trigger, connection));
    assert.equal(keys.sort(), ['KAN-1', 'KAN-2', 'KAN-3']);
    assert.is(fake.calls.filter((call) => call.path.endsWith('/search/jql')).length, 1, 'the token of a last page is not followed');
  } finally {
    await fake.stop();
  }
});

audit.run();

// ─── The search for a run's comment, against comment lists without end ───

const commentSearch = suite('comment searches without end');

const someoneElses = (words: string): CommentDocument => ({ runId: 'run_pages0001', header: [{ kind: 'words', text: words }], blocks: [] });

/** A GitHub issue whose comment list links to a next page every time: a fresh one, or (`same`) the page just read. */
async function githubComments(same: boolean): Promise<{ fake: FakeGitHub; target: WriteBackTarget; listings: () => number }> {
  const fake = await FakeGitHub.start();
  fake.addRepo(repo);
  const issue = fake.addIssue(repo, { title: 'Many comments' });
  fake.addComment(repo, issue.number, 'Not the run’s.', { author: 'monalisa' });
  const path = `/repos/${repo}/issues/${issue.number}/comments`;
  fake.misbehave = (call, answer) => {
    if (call.method !== 'GET' || call.path !== path) return answer;
    const page = Number(call.query.page ?? 1);
    const next = new URLSearchParams({ ...call.query, page: String(same ? page : page + 1) });
    return { ...answer, headers: { ...answer.headers, link: `<${fake.url}${path}?${next}>; rel="next"` } };
  };
  const { connection, trigger } = githubSetup(fake);
  const target = { connection, trigger, issue: { title: issue.title, key: `${repo}#${issue.number}`, raw: { number: issue.number } } };
  return { fake, target, listings: () => fake.callsTo('GET', path).length };
}

commentSearch(`GitHub: a comment list that always links a next page ends the search after ${maxPagesPerPoll} pages, in words, and nothing is posted`, async () => {
  const { fake, target, listings } = await githubComments(false);
  try {
    const failed = await withTimeout(githubProvider.upsertComment(target, someoneElses(' · started')).then(() => undefined, (error: unknown) => error), 'the comment search to end', 20_000);
    assert.instance(failed, ProviderError);
    assert.is((failed as ProviderError).message, `GitHub kept sending more pages of the comments on ${repo}#1: Factory stopped looking for the run's comment after ${maxPagesPerPoll} pages (10,000 comments) and wrote none, rather than risk a second one`);
    assert.is(listings(), maxPagesPerPoll);
    assert.is(fake.comments(repo, 1).length, 1, 'no comment was posted');
  } finally {
    await fake.stop();
  }
});

commentSearch('GitHub: a comment list whose next page is the page just read ends the search, and the write-back may try again', async () => {
  const { fake, target, listings } = await githubComments(true);
  try {
    const failed = await withTimeout(githubProvider.upsertComment(target, someoneElses(' · started')).then(() => undefined, (error: unknown) => error), 'the comment search to end', 20_000);
    assert.instance(failed, ProviderError);
    assert.match((failed as ProviderError).message, new RegExp(`^GitHub sent the same page of the comments on ${repo}#1 again after \\d pages, so Factory stopped looking for the run's comment`));
    assert.ok((failed as ProviderError).retryable);
    assert.ok(listings() <= 3, `${listings()} requests`);
    assert.is(fake.comments(repo, 1).length, 1, 'no comment was posted');
  } finally {
    await fake.stop();
  }
});

for (const mode of ['cloud', 'datacenter'] as const) {
  commentSearch(`Jira ${mode}: a comment list whose total is never reached ends the search after ${maxPagesPerPoll} pages, in words, and nothing is posted`, async () => {
    const fake = await FakeJira.start({ mode });
    try {
      const issue = fake.addIssue({ project: 'KAN', summary: 'Many comments' });
      fake.addComment(issue, 'Not the run’s.', { author: 'other' });
      const listing = (call: { method: string; path: string }) => call.method === 'GET' && call.path.endsWith(`/issue/${issue.key}/comment`);
      let first: unknown[] | undefined;
      // Every page holds someone else's comment and a total far ahead, whatever startAt asks for.
      fake.misbehave = (call, answer) => {
        if (!listing(call)) return answer;
        const body = answer.body as { comments: unknown[] };
        first ??= body.comments;
        return { ...answer, body: { ...body, startAt: Number(call.query.startAt ?? 0), total: Number.MAX_SAFE_INTEGER, comments: first } };
      };
      const connection: Connection = { id: 'con_1', kind: 'jira', name: 'Acme', baseUrl: fake.url, token: fake.token, ...(mode === 'cloud' ? { email: fake.email } : {}), account: { id: 'me', name: 'Me', server: mode === 'cloud' ? 'Jira Cloud' : 'Jira Data Center 9.12.15' } };
      const trigger = { id: 'trg_1', name: 'KAN', kind: 'jira', enabled: true, pipelineId: 'pl_1', connectionId: 'con_1', filter: { query: 'project = KAN' } } as TriggerConfig;
      const target: WriteBackTarget = { connection, trigger, issue: { title: issue.summary, key: issue.key } };
      const failed = await withTimeout(jiraProvider.upsertComment(target, someoneElses(' · started')).then(() => undefined, (error: unknown) => error), 'the comment search to end', 20_000);
      assert.instance(failed, ProviderError);
      assert.is((failed as ProviderError).message, `Jira kept sending more pages of the comments on ${issue.key}: Factory stopped looking for the run's comment after ${maxPagesPerPoll} pages (10,000 comments) and wrote none, rather than risk a second one`);
      assert.is(fake.calls.filter(listing).length, maxPagesPerPoll);
      assert.is(fake.comments(issue).length, 1, 'no comment was posted');
    } finally {
      await fake.stop();
    }
  });
}

commentSearch.run();
