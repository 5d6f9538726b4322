// Notifications end to end: runs finishing and waiting reach the channels that want them.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { waitFor } from '../helpers/temp';
import { FakeNotifyServer } from '../fakes/notify-servers';

const notifications = suite<{ factory: TestFactory; fake: FakeNotifyServer; remotePort: number }>('notifications');

notifications.before.each(async (context) => {
  context.fake = await FakeNotifyServer.start();
  context.remotePort = await freePort();
  context.factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port: context.remotePort } } });
});
notifications.after.each(async (context) => {
  await context.factory.close();
  await context.fake.close();
});

notifications('a waiting approval and a finished run reach Slack with the pipeline, issue, choices and a link', async ({ factory, fake, remotePort }) => {
  const pipeline = await factory.pipeline([approval('review', 'Ship "{{issue.title}}"?', { mode: 'single', options: ['Ship it', 'Rework'] }), shell('done', 'echo ok')], { name: 'Release' });
  const slackPath = '/services/T000/B000/SECRETSECRETSECRET';
  const channel = await factory.api.saveChannel({ kind: 'slack', name: 'Team', url: fake.url(slackPath), enabled: true, events: ['run.waiting', 'run.succeeded'] });
  assert.is((channel as { hasToken?: boolean }).hasToken, false);
  const run = await factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'Dark mode', key: 'UI-7' } });
  await factory.waitForRun(run.id, ['waiting']);
  await waitFor(() => fake.to(slackPath).length === 1, 5000, 'the waiting notice');
  const waiting = JSON.parse(fake.to(slackPath)[0]!.body).text as string;
  for (const part of ['Release', 'Dark mode', 'UI-7', 'Ship it', 'Rework', `http://127.0.0.1:${remotePort}/#/runs/${run.id}`]) assert.ok(waiting.includes(part), `${part} in: ${waiting}`);
  await factory.api.approveStep(run.id, 'review', true, undefined, ['1']);
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => fake.to(slackPath).length === 2, 5000, 'the finished notice');
  assert.match(JSON.parse(fake.to(slackPath)[1]!.body).text, /succeeded/i);
});

notifications('channels filter by event and pipeline; tokens never reach the snapshot', async ({ factory, fake }) => {
  const wanted = await factory.pipeline([shell('fail', 'exit 1')], { name: 'Wanted' });
  const other = await factory.pipeline([shell('fail', 'exit 1')], { name: 'Other' });
  await factory.api.saveChannel({ kind: 'telegram', name: 'Phone', url: fake.base, token: '123456:SECRET-BOT-TOKEN', chatId: '42', enabled: true, events: ['run.failed'], pipelineIds: [wanted.id] });
  const snapshot = JSON.stringify(await factory.api.snapshot());
  assert.not.match(snapshot, /SECRET-BOT-TOKEN/);
  // One after the other: a notice of the first would be sent (in order) before the second's.
  const one = await factory.api.startRun({ pipelineId: other.id });
  await factory.waitForRun(one.id, ['failed']);
  const two = await factory.api.startRun({ pipelineId: wanted.id, issue: { title: 'Broken build' } });
  await factory.waitForRun(two.id, ['failed']);
  const path = '/bot123456:SECRET-BOT-TOKEN/sendMessage';
  await waitFor(() => fake.to(path).length >= 1, 5000, 'the failure notice');
  assert.is(fake.to(path).length, 1, 'only the wanted pipeline');
  const body = JSON.parse(fake.to(path)[0]!.body);
  assert.is(body.chat_id, '42');
  assert.match(body.text, /Broken build/);
});

notifications('testChannel sends a real message for an unsaved channel and reports the service\'s own error', async ({ factory, fake }) => {
  const ok = await factory.api.testChannel({ kind: 'discord', name: 'D', url: fake.url('/api/webhooks/1/tok'), enabled: true, events: [] });
  assert.equal(ok, { ok: true });
  fake.script('/api/webhooks/2/gone', { status: 404, headers: { 'Content-Type': 'application/json' }, body: '{"code":10015,"message":"Unknown Webhook"}' });
  const gone = await factory.api.testChannel({ kind: 'discord', name: 'D', url: fake.url('/api/webhooks/2/gone'), enabled: true, events: [] });
  assert.is(gone.ok, false);
  assert.match(gone.error!, /Unknown Webhook/);
  assert.not.match(gone.error!, /gone/, 'the webhook token is not in the error');
});

notifications.run();
