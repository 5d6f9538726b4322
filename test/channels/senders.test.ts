// Notices and their delivery: the message for a run, each service's exact request, and each
// service's answers (success, its own error texts, rate limits, timeouts, HTML, refusals) against
// real fake servers. Secrets in URLs never reach an error.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Channel, Run } from '../../src/core/api';
import { cut, discordPayload, noticeForRun, noticeForTriggerError, telegramPayload, type Notice } from '../../src/channels/message';
import { sendNotice } from '../../src/channels/senders';
import { redactUrl } from '../../src/net/http';
import { answers, FakeNotifyServer } from '../fakes/notify-servers';
import { freePort } from '../helpers/net';

const slackSecret = 'XyZsEcReT0123456789abcd';
const discordToken = 'dIsCoRdToKeN_0123456789-abcdefABCDEF';
const botToken = '123456789:AAHsecretBotToken_0123456789abcdef';
const ntfyToken = 'tk_ntfysecret0123456789abcdef';

const notice: Notice = { event: 'run.failed', title: 'Failed: Crash on save', text: 'Pipeline: Feature\nStatus: failed', url: 'http://127.0.0.1:7718/runs/run_1', pipelineId: 'pl_1', runId: 'run_1', status: 'failed' };

function channel(kind: Channel['kind'], fields: Partial<Channel> = {}): Channel {
  return { id: 'ch_0123456789abcdef', kind, name: `My ${kind}`, enabled: true, events: ['run.failed'], ...fields };
}

// ─── Messages ───

const messages = suite('message');

const waitingRun: Run = {
  id: 'run_1',
  pipelineId: 'pl_1',
  pipelineName: 'Feature',
  projectId: 'prj_1',
  issue: { title: 'Crash on save', key: 'ENG-12' },
  variables: {},
  status: 'waiting',
  createdAt: 1,
  steps: [
    { id: 'build', name: 'Build', kind: 'shell', status: 'succeeded', attempt: 1 },
    { id: 'review', name: 'Review', kind: 'approval', status: 'waiting', attempt: 1, message: 'Ship the fix for ENG-12?' },
  ],
  pipeline: {
    id: 'pl_1', projectId: 'prj_1', name: 'Feature', variables: {}, createdAt: 1, updatedAt: 1,
    steps: [
      { id: 'build', name: 'Build', kind: 'shell', command: 'make' },
      { id: 'review', name: 'Review', kind: 'approval', message: 'Ship the fix for {{issue.key}}?', choices: { mode: 'single', options: ['Ship it', 'Rework'] } },
    ],
  },
};

messages('a waiting run names pipeline, issue and key, status, the step, its message and numbered choices', () => {
  const made = noticeForRun(waitingRun, 'run.waiting', 'http://host/runs/run_1');
  assert.is(made.title, 'Waiting for approval: Crash on save');
  assert.is(made.text, 'Pipeline: Feature\nIssue: Crash on save (ENG-12)\nStatus: waiting\nStep: Review\nShip the fix for ENG-12?\nChoices: 1 = Ship it, 2 = Rework');
  assert.is(made.url, 'http://host/runs/run_1');
  assert.is(made.pipelineId, 'pl_1');
});

messages('a failed run without an issue is named by its pipeline and carries its error; no URL, no link', () => {
  const made = noticeForRun({ ...waitingRun, issue: undefined, status: 'failed', error: 'Step `test` failed', pipeline: undefined }, 'run.failed');
  assert.is(made.title, 'Failed: Feature');
  assert.is(made.text, 'Pipeline: Feature\nStatus: failed\nError: Step `test` failed');
  assert.is(made.url, undefined);
});

messages('a trigger error is a notice of its own', () => {
  assert.equal(noticeForTriggerError('Linear answered 401', 'Bugs'), { event: 'trigger.error', title: 'Trigger error: Bugs', text: 'Linear answered 401' });
});

messages('Discord content stays within 2000 characters and Telegram text within 4096, cut with …', () => {
  const long: Notice = { ...notice, text: 'x'.repeat(10_000) };
  const content = discordPayload(long).content;
  assert.is(content.length, 2000);
  assert.ok(content.endsWith('…\n' + notice.url));
  assert.is(telegramPayload(long, '1').text.length, 4096);
  assert.is(cut('ab😀', 3), 'ab…');
});

messages.run();

// ─── Sending ───

const senders = suite<{ fake: FakeNotifyServer }>('senders');
senders.before.each(async (context) => {
  context.fake = await FakeNotifyServer.start();
});
senders.after.each(async ({ fake }) => {
  await fake.close();
});

senders('Slack: POSTs {text} with the title in bold and an mrkdwn link, and takes the plain `ok`', async ({ fake }) => {
  const path = `/services/T0001/B0001/${slackSecret}`;
  const result = await sendNotice(channel('slack', { url: fake.url(path) }), { ...notice, title: 'Failed: <a> & b' });
  assert.equal(result, { ok: true });
  const [request] = fake.to(path);
  assert.is(request!.method, 'POST');
  assert.is(request!.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(request!.body), { text: '*Failed: &lt;a&gt; &amp; b*\nPipeline: Feature\nStatus: failed\n<http://127.0.0.1:7718/runs/run_1|Open run>' });
});

senders('Discord: POSTs {content} without mentions and takes the 204', async ({ fake }) => {
  const path = `/api/webhooks/111/${discordToken}`;
  assert.equal(await sendNotice(channel('discord', { url: fake.url(path) }), notice), { ok: true });
  const [request] = fake.to(path);
  assert.is(request!.method, 'POST');
  assert.equal(JSON.parse(request!.body), { content: '**Failed: Crash on save**\nPipeline: Feature\nStatus: failed\nhttp://127.0.0.1:7718/runs/run_1', allowed_mentions: { parse: [] } });
});

senders('ntfy: POSTs the plain text to server + topic with Title, Tags, Click and the bearer token', async ({ fake }) => {
  const result = await sendNotice(channel('ntfy', { url: fake.url('/factory-alerts'), token: ntfyToken }), { ...notice, title: 'Échec: ☕' });
  assert.equal(result, { ok: true });
  const [request] = fake.to('/factory-alerts');
  assert.is(request!.method, 'POST');
  assert.is(request!.body, 'Pipeline: Feature\nStatus: failed');
  assert.is(request!.headers.title, `=?UTF-8?B?${Buffer.from('Échec: ☕').toString('base64')}?=`);
  assert.is(request!.headers.tags, 'x');
  assert.is(request!.headers.click, notice.url);
  assert.is(request!.headers.authorization, `Bearer ${ntfyToken}`);
});

senders('ntfy without a token sends no Authorization, and a plain title as is', async ({ fake }) => {
  await sendNotice(channel('ntfy', { url: fake.url('/t') }), notice);
  assert.is(fake.to('/t')[0]!.headers.authorization, undefined);
  assert.is(fake.to('/t')[0]!.headers.title, 'Failed: Crash on save');
});

senders('Telegram: POSTs {chat_id, text, link_preview_options} to <base>/bot<token>/sendMessage, no parse_mode', async ({ fake }) => {
  const result = await sendNotice(channel('telegram', { url: fake.base + '/', token: botToken, chatId: '-100123' }), notice);
  assert.equal(result, { ok: true });
  const [request] = fake.to(`/bot${botToken}/sendMessage`);
  assert.is(request!.method, 'POST');
  assert.is(request!.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(request!.body), { chat_id: '-100123', text: 'Failed: Crash on save\nPipeline: Feature\nStatus: failed\nhttp://127.0.0.1:7718/runs/run_1', link_preview_options: { is_disabled: true } });
});

senders('generic webhook: POSTs the documented JSON body with the send time', async ({ fake }) => {
  assert.equal(await sendNotice(channel('webhook', { url: fake.url('/hook') }), notice, { now: () => 1700000000000 }), { ok: true });
  assert.equal(JSON.parse(fake.to('/hook')[0]!.body), { event: 'run.failed', title: 'Failed: Crash on save', text: 'Pipeline: Feature\nStatus: failed', url: notice.url, runId: 'run_1', pipelineId: 'pl_1', status: 'failed', at: 1700000000000 });
});

senders('desktop: ok without a port; with one, the port shows the notice', async () => {
  assert.equal(await sendNotice(channel('desktop'), notice), { ok: true });
  const shown: Notice[] = [];
  assert.equal(await sendNotice(channel('desktop'), notice, { desktopNotify: async (item) => void shown.push(item) }), { ok: true });
  assert.equal(shown, [notice]);
  const failed = await sendNotice(channel('desktop'), notice, { desktopNotify: async () => { throw new Error('notify-send not found'); } });
  assert.equal(failed, { ok: false, error: 'notify-send not found', retryable: false });
});

senders("each error answer becomes the service's own text, retryable only for 429 and 5xx", async ({ fake }) => {
  const slack = `/services/T0001/B0001/${slackSecret}`;
  const discord = `/api/webhooks/111/${discordToken}`;
  const telegram = `/bot${botToken}/sendMessage`;
  fake.script(slack, answers.slack.invalidPayload, answers.slack.noService);
  fake.script(discord, answers.discord.unknownWebhook, answers.discord.rateLimited(1.5));
  fake.script('/alerts', answers.ntfy.forbidden, answers.ntfy.tooManyRequests);
  fake.script(telegram, answers.telegram.chatNotFound, answers.telegram.tooManyRequests(3));
  fake.script('/hook', answers.generic.serverError);
  const slackChannel = channel('slack', { url: fake.url(slack) });
  const discordChannel = channel('discord', { url: fake.url(discord) });
  const ntfyChannel = channel('ntfy', { url: fake.url('/alerts'), token: ntfyToken });
  const telegramChannel = channel('telegram', { url: fake.base, token: botToken, chatId: '42' });
  const results = [
    await sendNotice(slackChannel, notice),
    await sendNotice(slackChannel, notice),
    await sendNotice(discordChannel, notice),
    await sendNotice(discordChannel, notice),
    await sendNotice(ntfyChannel, notice),
    await sendNotice(ntfyChannel, notice),
    await sendNotice(telegramChannel, notice),
    await sendNotice(telegramChannel, notice),
    await sendNotice(channel('webhook', { url: fake.url('/hook') }), notice),
  ];
  assert.equal(results, [
    { ok: false, error: 'Slack answered HTTP 400: invalid_payload', retryable: false },
    { ok: false, error: 'Slack answered HTTP 404: no_service', retryable: false },
    { ok: false, error: 'Discord answered HTTP 404: Unknown Webhook', retryable: false },
    { ok: false, error: 'Discord answered HTTP 429: You are being rate limited.', retryable: true, retryAfterMs: 1500 },
    { ok: false, error: 'ntfy answered HTTP 403: forbidden', retryable: false },
    { ok: false, error: 'ntfy answered HTTP 429: limit reached: too many requests', retryable: true, retryAfterMs: 7000 },
    { ok: false, error: 'Telegram answered HTTP 400: Bad Request: chat not found', retryable: false },
    { ok: false, error: 'Telegram answered HTTP 429: Too Many Requests: retry after 3', retryable: true, retryAfterMs: 3000 },
    { ok: false, error: 'The webhook answered HTTP 500: Internal error: the database is down', retryable: true },
  ]);
});

senders('Retry-After as an HTTP date counts from now', async ({ fake }) => {
  const now = Date.parse('2024-01-01T00:00:00Z');
  fake.script('/hook', { status: 503, headers: { 'Retry-After': 'Mon, 01 Jan 2024 00:00:30 GMT' }, body: 'busy' });
  const result = await sendNotice(channel('webhook', { url: fake.url('/hook') }), notice, { now: () => now });
  assert.equal(result, { ok: false, error: 'The webhook answered HTTP 503: busy', retryable: true, retryAfterMs: 30_000 });
});

senders('a service that answers too slowly fails with a readable timeout, retryable', async ({ fake }) => {
  const path = `/services/T0001/B0001/${slackSecret}`;
  fake.script(path, answers.slow(5000));
  const result = await sendNotice(channel('slack', { url: fake.url(path) }), notice, { timeoutMs: 100 });
  assert.equal(result, { ok: false, error: `Slack at ${fake.base.slice(7)} did not answer within 0.1 s\nDetails: POST ${fake.base}/services/***`, retryable: true });
});

senders('an HTML page where JSON belongs fails and asks whether the URL is right', async ({ fake }) => {
  fake.script(`/bot${botToken}/sendMessage`, answers.html);
  fake.script('/alerts', answers.html);
  const telegram = await sendNotice(channel('telegram', { url: fake.base, token: botToken, chatId: '42' }), notice);
  assert.equal(telegram, { ok: false, error: `Telegram answered HTTP 200 with an HTML page instead of its usual answer: is ${fake.base}/bot***/sendMessage the right URL?`, retryable: false });
  const ntfy = await sendNotice(channel('ntfy', { url: fake.url('/alerts') }), notice);
  assert.is(ntfy.ok, false);
  assert.match((ntfy as { error: string }).error, /ntfy answered HTTP 200 with an HTML page/);
});

senders('a URL nobody listens on fails with "connection refused", retryable', async () => {
  const port = await freePort();
  const result = await sendNotice(channel('discord', { url: `http://127.0.0.1:${port}/api/webhooks/111/${discordToken}` }), notice);
  assert.equal(result, { ok: false, error: `Couldn't reach Discord at 127.0.0.1:${port} (connection refused)\nDetails: POST http://127.0.0.1:${port}/api/webhooks/***: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`, retryable: true });
});

senders('no error ever contains a webhook secret or a token', async ({ fake }) => {
  const port = await freePort();
  const slackPath = `/services/T0001/B0001/${slackSecret}`;
  const discordPath = `/api/webhooks/111/${discordToken}`;
  // Services that echo the URL (and token) they were called with must not leak them either.
  const echo = (status: number, said: string) => ({ status, body: `cannot post to ${said}` });
  fake.script(slackPath, echo(500, fake.url(slackPath)), answers.slow(5000), answers.html);
  fake.script(discordPath, echo(502, discordPath), answers.html);
  fake.script(`/bot${botToken}/sendMessage`, echo(500, `bot ${botToken}`), answers.slow(5000));
  fake.script('/hook', echo(500, `/hook?token=${ntfyToken}`));
  fake.script('/alerts', echo(500, `Bearer ${ntfyToken}`));
  const slack = channel('slack', { url: fake.url(slackPath) });
  const discord = channel('discord', { url: fake.url(discordPath) });
  const telegram = channel('telegram', { url: fake.base, token: botToken, chatId: '42' });
  const options = { timeoutMs: 100 };
  const results = [
    await sendNotice(slack, notice, options), await sendNotice(slack, notice, options), await sendNotice(slack, notice, options),
    await sendNotice(discord, notice, options), await sendNotice(discord, notice, options),
    await sendNotice(telegram, notice, options), await sendNotice(telegram, notice, options),
    await sendNotice(channel('webhook', { url: fake.url(`/hook?token=${ntfyToken}`) }), notice, options),
    await sendNotice(channel('ntfy', { url: fake.url('/alerts'), token: ntfyToken }), notice, options),
    await sendNotice(channel('slack', { url: `http://127.0.0.1:${port}${slackPath}` }), notice, options),
    await sendNotice(channel('telegram', { url: `http://127.0.0.1:${port}`, token: botToken, chatId: '42' }), notice, options),
  ];
  for (const result of results) {
    assert.is(result.ok, false);
    const error = (result as { error: string }).error;
    for (const secret of [slackSecret, discordToken, botToken, ntfyToken, 'AAHsecretBotToken']) assert.not.ok(error.includes(secret), `${error} contains a secret`);
  }
});

senders('redactUrl hides webhook paths, bot tokens, token queries and user info, and keeps the rest', () => {
  assert.is(redactUrl('https://hooks.slack.com/services/T0/B0/abc'), 'https://hooks.slack.com/services/***');
  assert.is(redactUrl('https://discord.com/api/webhooks/123/abc?wait=true'), 'https://discord.com/api/webhooks/***?wait=true');
  assert.is(redactUrl(`https://api.telegram.org/bot${botToken}/sendMessage`), 'https://api.telegram.org/bot***/sendMessage');
  assert.is(redactUrl('https://example.com/notify?token=abc&team=a'), 'https://example.com/notify?token=***&team=a');
  assert.is(redactUrl('https://user:pass@example.com/x'), 'https://***@example.com/x');
  assert.is(redactUrl('https://ntfy.sh/factory-alerts'), 'https://ntfy.sh/factory-alerts');
  assert.is(redactUrl('https://hooks.zapier.com/hooks/catch/123/a1b2c3d4e5f6g7h8i9/'), 'https://hooks.zapier.com/hooks/catch/123/***/');
  assert.is(redactUrl('not a url'), '(an invalid URL)');
});

senders.run();
