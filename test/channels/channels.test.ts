// ChannelService: saving, validating, deleting and testing channels, and background delivery with
// filters, retries (delays recorded, never waited) and one inbox item when a channel gives up.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Channel, ChannelInput } from '../../src/core/api';
import { ChannelService, type ChannelSend } from '../../src/channels/channels';
import { Inbox } from '../../src/channels/inbox';
import type { Notice } from '../../src/channels/message';
import type { SendResult } from '../../src/channels/senders';
import { ConfigService } from '../../src/engine/config';
import { DataStore } from '../../src/store/data-store';
import { answers, FakeNotifyServer } from '../fakes/notify-servers';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';

interface Context {
  dir: string;
  store: DataStore;
  config: ConfigService;
  inbox: Inbox;
  fake: FakeNotifyServer;
  delays: number[];
  service: ChannelService;
}

const channels = suite<Context>('channels');

channels.before.each(async (context) => {
  context.dir = makeTempDir('factory-channels');
  context.store = new DataStore(context.dir);
  await context.store.open();
  context.config = await ConfigService.open(context.store);
  context.inbox = await Inbox.open(context.store, () => undefined);
  context.fake = await FakeNotifyServer.start();
  context.delays = [];
  context.service = new ChannelService({ config: context.config, inbox: context.inbox, sleep: async (ms) => void context.delays.push(ms) });
});

channels.after.each(async (context) => {
  await context.service.idle();
  await context.fake.close();
  await context.inbox.close();
  await context.config.idle();
  await context.store.close();
  removeTempDir(context.dir);
});

const botToken = '123456789:AAHsecretBotToken_0123456789abcdef';
const notice: Notice = { event: 'run.failed', title: 'Failed: Crash on save', text: 'Pipeline: Feature', pipelineId: 'pl_a', runId: 'run_1', status: 'failed' };

function hookInput(fake: FakeNotifyServer, fields: Partial<ChannelInput> = {}): ChannelInput {
  return { kind: 'webhook', name: 'Ops hook', url: fake.url('/hook'), enabled: true, events: ['run.failed'], ...fields };
}

channels('saveChannel creates a ch_ id, stores the channel and never returns the token', async ({ service, config }) => {
  const saved = await service.saveChannel({ kind: 'telegram', name: 'Phone', token: botToken, chatId: -100123, enabled: true, events: ['run.waiting'] });
  assert.match(saved.id, /^ch_[0-9a-f]{16}$/);
  assert.equal(saved, { id: saved.id, kind: 'telegram', name: 'Phone', chatId: '-100123', enabled: true, events: ['run.waiting'], hasToken: true });
  assert.is(config.current.channels[0]!.token, botToken);
  assert.equal(service.views(), [saved]);
});

channels('saving without a token keeps the stored one', async ({ service, config }) => {
  const saved = await service.saveChannel({ kind: 'telegram', name: 'Phone', token: botToken, chatId: '42', enabled: true, events: ['run.waiting'] });
  const renamed = await service.saveChannel({ ...saved, name: 'My phone', token: '' });
  assert.is(renamed.name, 'My phone');
  assert.is(config.current.channels.length, 1);
  assert.is(config.current.channels[0]!.token, botToken);
});

channels('validation names each bad field and quotes the bad value', async ({ service }) => {
  await rejects(service.saveChannel({ kind: 'pager', name: 'x', enabled: true, events: [] }), /^The kind must be one of slack, discord, ntfy, telegram, webhook, desktop, not `pager`/m);
  await rejects(service.saveChannel({ kind: 'slack', name: ' ', enabled: true, events: [] }), /^The name is required[\s\S]*^The URL is required for a slack channel/m);
  await rejects(service.saveChannel({ kind: 'discord', name: 'd', url: 'ftp://example.com/x', enabled: true, events: [] }), /^The URL must be an http or https URL, not `ftp:`/m);
  await rejects(service.saveChannel({ kind: 'ntfy', name: 'n', url: 'https://ntfy.sh/', enabled: true, events: [] }), /^The URL must include the topic, as in https:\/\/ntfy.sh\/my-topic/m);
  await rejects(service.saveChannel({ kind: 'telegram', name: 't', enabled: true, events: [] }), /^The token is required[\s\S]*^The chat id is required/m);
  await rejects(service.saveChannel({ kind: 'desktop', name: 'd', enabled: 'yes', events: ['run.done'] }), /^The switch must be true or false, not `yes`[\s\S]*^Each event must be one of run.succeeded, run.failed, run.waiting, trigger.error, not `run.done`/m);
  await rejects(service.saveChannel({ kind: 'desktop', name: 'd', enabled: true, events: [], pipelineIds: [3] }), /^The pipeline list must be a list of pipeline ids, not `\[3\]`/m);
  await rejects(service.saveChannel({ id: 'ch_0000000000000000', kind: 'desktop', name: 'd', enabled: true, events: [] }), /No channel with id `ch_0000000000000000`/);
});

channels('a bad URL is not quoted past its scheme, so a pasted secret stays out of the error', async ({ service }) => {
  const error = await rejects(service.saveChannel({ kind: 'slack', name: 's', url: 'hooks.slack.com/services/T0/B0/SeCrEtPaTh', enabled: true, events: [] }), /^The URL must be an http or https URL/m);
  assert.not.ok(error.message.includes('SeCrEtPaTh'));
});

channels('deleteChannel removes the channel; an unknown id is refused', async ({ service, fake, config }) => {
  const saved = await service.saveChannel(hookInput(fake));
  await service.deleteChannel(saved.id);
  assert.equal(config.current.channels, []);
  await rejects(service.deleteChannel(saved.id), /No channel with id/);
});

channels('testChannel sends "Factory test message" to an unsaved channel and reports the result', async ({ service, fake, config }) => {
  assert.equal(await service.testChannel(hookInput(fake)), { ok: true });
  assert.is(JSON.parse(fake.to('/hook')[0]!.body).title, 'Factory test message');
  assert.equal(config.current.channels, []);
  fake.script('/hook', answers.generic.serverError);
  assert.equal(await service.testChannel(hookInput(fake)), { ok: false, error: 'The webhook answered HTTP 500: Internal error: the database is down' });
});

channels('testChannel of a saved channel without a token uses the stored token', async ({ service, fake }) => {
  const saved = await service.saveChannel({ kind: 'telegram', name: 'Phone', url: fake.base, token: botToken, chatId: '42', enabled: true, events: [] });
  assert.equal(await service.testChannel({ ...saved, token: undefined }), { ok: true });
  assert.is(fake.to(`/bot${botToken}/sendMessage`).length, 1);
});

channels('notify reaches enabled channels that take the event and the pipeline, and returns at once', async (context) => {
  const sent: string[] = [];
  const send: ChannelSend = async (channel) => (sent.push(channel.name), { ok: true });
  const service = new ChannelService({ config: context.config, inbox: context.inbox, send });
  const base = hookInput(context.fake);
  await service.saveChannel({ ...base, name: 'all failures' });
  await service.saveChannel({ ...base, name: 'disabled', enabled: false });
  await service.saveChannel({ ...base, name: 'successes only', events: ['run.succeeded'] });
  await service.saveChannel({ ...base, name: 'pipeline a', pipelineIds: ['pl_a'] });
  await service.saveChannel({ ...base, name: 'pipeline b', pipelineIds: ['pl_b'] });
  const returned = service.notify('run.failed', notice);
  assert.is(returned, undefined);
  assert.equal(sent, []);
  await service.idle();
  assert.equal(sent.sort(), ['all failures', 'pipeline a']);
  assert.is(service.wants('run.failed'), true);
  assert.is(service.wants('run.succeeded'), true);
  assert.is(service.wants('trigger.error'), false, 'no enabled channel takes trigger errors, so no notice is built for them');
});

channels('a 429 is retried after the longer of the backoff and retry_after, then succeeds', async ({ service, fake, delays, inbox }) => {
  const path = '/api/webhooks/111/token0123456789abcdef';
  fake.script(path, answers.discord.rateLimited(2.5), answers.discord.rateLimited(0.2));
  await service.saveChannel({ kind: 'discord', name: 'Team', url: fake.url(path), enabled: true, events: ['run.failed'] });
  service.notify('run.failed', notice);
  await service.idle();
  assert.is(fake.to(path).length, 3);
  assert.equal(delays, [2500, 4000]);
  assert.equal(inbox.latest(), []);
});

channels('5xx is retried four times in all, then one inbox item names the channel and the error', async ({ service, fake, delays, inbox }) => {
  fake.script('/hook', answers.generic.serverError, answers.generic.serverError, answers.generic.badGateway, answers.generic.serverError);
  await service.saveChannel(hookInput(fake));
  service.notify('run.failed', notice);
  await service.idle();
  assert.is(fake.to('/hook').length, 4);
  assert.equal(delays, [1000, 4000, 15000]);
  const items = inbox.latest();
  assert.is(items.length, 1);
  assert.equal([items[0]!.kind, items[0]!.title, items[0]!.body], ['channel.error', 'Notification failed: Ops hook', 'The webhook answered HTTP 500: Internal error: the database is down']);
});

channels('a 400 or 404 is not retried: one try, one inbox item in the service\'s words', async ({ service, fake, delays, inbox }) => {
  const path = '/services/T0001/B0001/secret0123456789abc';
  fake.script(path, answers.slack.noService);
  await service.saveChannel({ kind: 'slack', name: 'Slack', url: fake.url(path), enabled: true, events: ['run.failed'] });
  service.notify('run.failed', notice);
  await service.idle();
  assert.is(fake.to(path).length, 1);
  assert.equal(delays, []);
  assert.equal(inbox.latest().map((item) => item.body), ['Slack answered HTTP 404: no_service']);
});

channels('a send that throws never reaches the caller, and a deleted channel stops retrying', async (context) => {
  let calls = 0;
  let service: ChannelService;
  const send: ChannelSend = async (): Promise<SendResult> => {
    calls += 1;
    return { ok: false, error: 'HTTP 503', retryable: true };
  };
  service = new ChannelService({
    config: context.config,
    inbox: context.inbox,
    send,
    sleep: async () => {
      await service.deleteChannel((context.config.current.channels as Channel[])[0]!.id);
    },
  });
  await service.saveChannel(hookInput(context.fake));
  service.notify('run.failed', notice);
  await service.idle();
  assert.is(calls, 1);
  assert.equal(context.inbox.latest(), []);
  const throwing = new ChannelService({ config: context.config, inbox: context.inbox, send: async () => { throw new Error('boom'); } });
  await throwing.saveChannel(hookInput(context.fake));
  throwing.notify('run.failed', notice);
  await throwing.idle();
  assert.equal(context.inbox.latest().map((item) => item.body), ['boom']);
});

channels.run();
