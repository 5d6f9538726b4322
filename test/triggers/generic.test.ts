import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Issue, TriggerConfig } from '../../src/core/api';
import { genericWebhookProvider } from '../../src/triggers/providers/generic';
import type { IncomingWebhook, WebhookVerdict } from '../../src/triggers/provider';

const generic = suite('generic webhook');

const secret = 'trigger-secret-value';
const trigger: TriggerConfig = { id: 'trg_0123456789abcdef', name: 'Hook', kind: 'webhook', enabled: true, pipelineId: 'pl_0123456789abcdef', webhookSecret: secret };
const openTrigger: TriggerConfig = { ...trigger, webhookSecret: undefined };

/** Strictly increasing arrival times, so generated keys of separate tests never meet. */
let clock = 1_700_000_000_000;

function webhook(options: { body?: string | Buffer | object; headers?: Record<string, string | undefined>; query?: Record<string, string>; receivedAt?: number } = {}): IncomingWebhook {
  const { body = '' } = options;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  return { body: bytes, headers: options.headers ?? {}, query: options.query ?? {}, receivedAt: options.receivedAt ?? (clock += 10) };
}

function parse(options: Parameters<typeof webhook>[0]): WebhookVerdict {
  return genericWebhookProvider.parseWebhook(webhook(options), trigger);
}

/** The issue of a verdict that must start a run. */
function issueOf(verdict: WebhookVerdict): Issue & { key: string } {
  if (verdict.kind !== 'issue') assert.unreachable(`expected an issue, got ${JSON.stringify(verdict)}`);
  const { issue, key } = verdict as Extract<WebhookVerdict, { kind: 'issue' }>;
  assert.is(issue.key, key);
  return issue as Issue & { key: string };
}

function assertIgnored(verdict: WebhookVerdict): void {
  assert.equal(verdict, { kind: 'ignored', reason: 'ignored: no title' });
}

// ───────────────────────────── verify ─────────────────────────────

generic('accepts the secret by ?token=', () => {
  assert.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: secret } }), trigger));
});

generic('accepts the secret by X-Factory-Token', () => {
  assert.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { 'x-factory-token': secret } }), trigger));
});

generic('accepts the secret by Authorization: Bearer', () => {
  assert.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { authorization: `Bearer ${secret}` } }), trigger));
});

generic('rejects a wrong token by each path', () => {
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: 'wrong' } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { 'x-factory-token': secret + 'x' } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { authorization: `Basic ${secret}` } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { authorization: `Bearer ${secret.slice(1)}` } }), trigger));
});

generic('the token of higher precedence decides: a wrong ?token= is not rescued by a right header', () => {
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: 'wrong' }, headers: { 'x-factory-token': secret } }), trigger));
  assert.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: secret }, headers: { 'x-factory-token': 'wrong' } }), trigger));
});

generic('rejects a request that presents no token', () => {
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ body: { title: 'x' } }), trigger));
});

generic('rejects empty and very long tokens without throwing', () => {
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: '' } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { 'x-factory-token': '' } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: secret.repeat(100_000) } }), trigger));
  assert.not.ok(genericWebhookProvider.verifyWebhook(webhook({ headers: { authorization: 'Bearer ' + 'a'.repeat(1_000_000) } }), trigger));
});

generic('a cleared secret (undefined or empty) accepts every request', () => {
  assert.ok(genericWebhookProvider.verifyWebhook(webhook(), openTrigger));
  assert.ok(genericWebhookProvider.verifyWebhook(webhook({ query: { token: 'anything' } }), openTrigger));
  assert.ok(genericWebhookProvider.verifyWebhook(webhook(), { ...trigger, webhookSecret: '' }));
});

// ───────────────────────────── parse: the payload table ─────────────────────────────

generic('reads every field of a full JSON object', () => {
  const body = { title: 'Fix login', description: 'It fails', key: 'BUG-7', url: 'https://example.com/7', labels: ['bug', 'ui'], priority: 'high', extra: { nested: [1, 2] } };
  const issue = issueOf(parse({ body }));
  assert.equal(issue, {
    title: 'Fix login', description: 'It fails', key: 'BUG-7', url: 'https://example.com/7',
    labels: ['bug', 'ui'], priority: 'high', source: 'webhook', raw: body,
  });
});

generic('title: trimmed; else summary; else the title query parameter; else ignored', () => {
  assert.is(issueOf(parse({ body: { title: '  Padded  ' } })).title, 'Padded');
  assert.is(issueOf(parse({ body: { summary: 'From summary' } })).title, 'From summary');
  assert.is(issueOf(parse({ body: { title: '   ', summary: 'Blank title falls back' } })).title, 'Blank title falls back');
  assert.is(issueOf(parse({ body: { title: 'Title wins', summary: 'not this' }, query: { title: 'nor this' } })).title, 'Title wins');
  assert.is(issueOf(parse({ body: { other: 1 }, query: { title: ' From query ' } })).title, 'From query');
  assertIgnored(parse({ body: { description: 'no title anywhere' } }));
  assertIgnored(parse({ body: {}, query: { title: '   ' } }));
});

generic('non-string title fields are not titles', () => {
  assert.is(issueOf(parse({ body: { title: 42, summary: 'The summary' } })).title, 'The summary');
  assert.is(issueOf(parse({ body: { title: { text: 'x' }, summary: ['y'] }, query: { title: 'Query' } })).title, 'Query');
  assertIgnored(parse({ body: { title: true, summary: null } }));
});

generic('description: else body, else omitted', () => {
  assert.is(issueOf(parse({ body: { title: 't', description: 'D', body: 'B' } })).description, 'D');
  assert.is(issueOf(parse({ body: { title: 't', body: 'From body' } })).description, 'From body');
  assert.is(issueOf(parse({ body: { title: 't', description: '  ', body: 'B' } })).description, 'B');
  assert.is(issueOf(parse({ body: { title: 't', description: 7 } })).description, undefined);
  assert.not.ok('description' in issueOf(parse({ body: { title: 't' } })));
  assert.is(issueOf(parse({ body: { title: 't', description: '  kept as sent\n' } })).description, '  kept as sent\n');
});

generic('key: else id (a number as its decimal text), else a generated HOOK-<receivedAt>', () => {
  assert.is(issueOf(parse({ body: { title: 't', key: 'K-1', id: 'ignored' } })).key, 'K-1');
  assert.is(issueOf(parse({ body: { title: 't', id: 'ID-9' } })).key, 'ID-9');
  assert.is(issueOf(parse({ body: { title: 't', id: 12345 } })).key, '12345');
  assert.is(issueOf(parse({ body: { title: 't', key: 77 } })).key, '77');
  assert.is(issueOf(parse({ body: { title: 't', key: '  ', id: 'fallback' } })).key, 'fallback');
  assert.is(issueOf(parse({ body: { title: 't', key: {}, id: Number.NaN } })).key.startsWith('HOOK-'), true);
  const receivedAt = (clock += 1000);
  assert.is(issueOf(parse({ body: { title: 't' }, receivedAt })).key, `HOOK-${receivedAt}`);
});

generic('generated keys stay unique for requests in the same millisecond or out of order', () => {
  const receivedAt = (clock += 1000);
  const keys = Array.from({ length: 5 }, () => issueOf(parse({ body: { title: 't' }, receivedAt })).key);
  keys.push(issueOf(parse({ body: 'text', receivedAt: receivedAt - 5 })).key);
  assert.is(keys[0], `HOOK-${receivedAt}`);
  assert.is(keys[1], `HOOK-${receivedAt}-1`);
  assert.is(new Set(keys).size, keys.length);
  for (const key of keys) assert.match(key, /^HOOK-\d+(-\d+)?$/);
});

generic('an ignored request uses up no generated key', () => {
  const receivedAt = (clock += 1000);
  assertIgnored(parse({ body: {}, receivedAt }));
  assert.is(issueOf(parse({ body: { title: 't' }, receivedAt })).key, `HOOK-${receivedAt}`);
});

generic('url and priority: no fallbacks; priority numbers become text', () => {
  const issue = issueOf(parse({ body: { title: 't', url: ' https://example.com/x ', priority: 2 } }));
  assert.is(issue.url, 'https://example.com/x');
  assert.is(issue.priority, '2');
  const bare = issueOf(parse({ body: { title: 't', url: 5, priority: { level: 1 } } }));
  assert.not.ok('url' in bare);
  assert.not.ok('priority' in bare);
});

generic('labels: an array keeps strings and numbers as text, drops the rest', () => {
  const issue = issueOf(parse({ body: { title: 't', labels: ['bug', 3, null, { name: 'x' }, ['y'], true, '  ', ' ui '] } }));
  assert.equal(issue.labels, ['bug', '3', 'ui']);
});

generic('labels that are not an array are ignored, not an error', () => {
  for (const labels of ['bug', 5, { 0: 'bug' }, null]) {
    const issue = issueOf(parse({ body: { title: 't', labels } }));
    assert.not.ok('labels' in issue, JSON.stringify(labels));
  }
  assert.not.ok('labels' in issueOf(parse({ body: { title: 't', labels: [null, {}] } })));
});

generic('raw is the whole body: every extra field reachable', () => {
  const body = { title: 't', customer: { name: 'Acme', tier: 3 }, list: [1, 'two'], flag: false };
  const issue = issueOf(parse({ body }));
  assert.equal(issue.raw, body);
  assert.is(issue.source, 'webhook');
});

// ───────────────────────────── parse: bodies that are not JSON objects ─────────────────────────────

generic('a text body: its first 200 characters are the title, the whole body the description', () => {
  const text = '  Build failed on main\nsee the log below ' + 'x'.repeat(500);
  const issue = issueOf(parse({ body: text }));
  assert.is(issue.title, text.trim().slice(0, 200));
  assert.is(issue.description, text);
  assert.match(issue.key, /^HOOK-\d+(-\d+)?$/);
  assert.is(issue.source, 'webhook');
  assert.not.ok('raw' in issue);
});

generic('a text body wins over the title query parameter; a key field in text means nothing', () => {
  const issue = issueOf(parse({ body: 'key: K-1 deploy', query: { title: 'Query title' } }));
  assert.is(issue.title, 'key: K-1 deploy');
  assert.match(issue.key, /^HOOK-/);
});

generic('the 200-character cut counts characters, never splitting an emoji', () => {
  const issue = issueOf(parse({ body: '🚀'.repeat(300) }));
  assert.is(issue.title, '🚀'.repeat(200));
});

generic('almost-JSON is text', () => {
  assert.is(issueOf(parse({ body: '{"title": "unclosed"' })).title, '{"title": "unclosed"');
});

generic('an empty body with ?title=Deploy is an issue titled Deploy', () => {
  const issue = issueOf(parse({ body: '', query: { title: 'Deploy' } }));
  assert.is(issue.title, 'Deploy');
  assert.not.ok('description' in issue);
  assert.match(issue.key, /^HOOK-/);
});

generic('an empty or blank body without ?title= is ignored', () => {
  assertIgnored(parse({ body: '' }));
  assertIgnored(parse({ body: ' \n\t ' }));
  assert.is(issueOf(parse({ body: ' \n ', query: { title: 'Deploy' } })).title, 'Deploy');
});

generic('valid JSON that is not an object has no fields: only ?title= can name it', () => {
  for (const body of ['[{"title":"in an array"}]', '"a JSON string"', '42', 'null', 'true']) {
    assertIgnored(parse({ body }));
    const issue = issueOf(parse({ body, query: { title: 'Named' } }));
    assert.is(issue.title, 'Named');
    assert.not.ok('raw' in issue);
    assert.not.ok('description' in issue);
  }
});

generic('a leading byte-order mark does not hide the JSON', () => {
  const issue = issueOf(parse({ body: '\uFEFF{"title":"With BOM"}' }));
  assert.is(issue.title, 'With BOM');
});

// ───────────────────────────── parse: hostile input ─────────────────────────────

generic('invalid UTF-8 bytes become replacement characters', () => {
  const issue = issueOf(parse({ body: Buffer.from([0x66, 0x69, 0x78, 0x20, 0xff, 0xfe, 0xc3]) }));
  assert.is(issue.title, 'fix \uFFFD\uFFFD\uFFFD');
  const json = issueOf(parse({ body: Buffer.concat([Buffer.from('{"title":"a'), Buffer.from([0xff]), Buffer.from('b"}')]) }));
  assert.is(json.title, 'a\uFFFDb');
});

generic('__proto__ keys stay plain data and pollute no prototype', () => {
  const body = '{"__proto__":{"title":"from proto","polluted":true},"constructor":{"prototype":{"polluted":true}},"summary":"Real"}';
  const issue = issueOf(parse({ body }));
  assert.is(issue.title, 'Real');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  assert.is(Object.getPrototypeOf(issue.raw), Object.prototype);
  assert.ok(Object.hasOwn(issue.raw!, '__proto__'));
  assertIgnored(parse({ body: '{"__proto__":{"title":"only inherited"}}' }));
});

generic('fields are read only as own properties', () => {
  assertIgnored(parse({ body: { toString: 'x', constructor: 'y' } }));
  const issue = issueOf(parse({ body: { title: 't' } }));
  assert.match(issue.key, /^HOOK-/); // not Object.prototype's anything
});

generic('a deeply nested body is refused as invalid, without throwing', () => {
  const depth = 100_000;
  const body = '{"title":"deep","a":' + '['.repeat(depth) + ']'.repeat(depth) + '}';
  const verdict = parse({ body });
  assert.equal(verdict, { kind: 'invalid', reason: 'webhook body is nested deeper than 100 levels' });
  const fine = '{"title":"ok","a":' + '['.repeat(98) + ']'.repeat(98) + '}';
  assert.is(issueOf(parse({ body: fine })).title, 'ok');
  const raw = issueOf(parse({ body: fine })).raw;
  assert.ok(JSON.stringify(raw).length > 0);
});

generic('unbalanced nesting is text, and a nesting bomb that is not JSON does not throw', () => {
  const issue = issueOf(parse({ body: '['.repeat(1_000_000) }));
  assert.is(issue.title, '['.repeat(200));
});

generic('a 2 MB body parses within limits', () => {
  const big = { title: 'x'.repeat(2_000_000), labels: Array.from({ length: 50_000 }, (_, index) => `label-${index}`), key: 'k'.repeat(5000), priority: 'p'.repeat(5000), url: 'https://example.com/' + 'u'.repeat(5000) };
  const issue = issueOf(parse({ body: big }));
  assert.is(issue.title.length, 1000);
  assert.is(issue.labels!.length, 100);
  assert.is(issue.priority!.length, 100);
  assert.not.ok('url' in issue);
  assert.ok(issue.key.length <= 200);

  const text = 'y'.repeat(2 * 1024 * 1024);
  const textIssue = issueOf(parse({ body: text }));
  assert.is(textIssue.title.length, 200);
  assert.is(textIssue.description!.length, text.length);
});

generic('long keys are cut to 200 characters and stay distinct', () => {
  const base = 'K'.repeat(300);
  const first = issueOf(parse({ body: { title: 't', key: base + 'a' } })).key;
  const second = issueOf(parse({ body: { title: 't', key: base + 'b' } })).key;
  assert.is(first.length, 200);
  assert.not.equal(first, second);
  assert.is(first, issueOf(parse({ body: { title: 't', key: base + 'a' } })).key);
  const emoji = '🔑'.repeat(150);
  assert.is(issueOf(parse({ body: { title: 't', key: emoji } })).key, emoji);
});

generic('long labels and titles are cut, short ones kept', () => {
  const issue = issueOf(parse({ body: { title: 'T'.repeat(1500), labels: ['L'.repeat(500), 'ok'] } }));
  assert.is(issue.title.length, 1000);
  assert.equal(issue.labels, ['L'.repeat(200), 'ok']);
});

generic.run();
