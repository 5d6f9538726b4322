// Approvals decided with Telegram buttons (issue 26.4-26.6) against a fake Bot API: sendMessage
// with an inline keyboard, getUpdates long polls with callback_query updates, answerCallbackQuery,
// editMessageText, the 409 conflicts and a 429 with retry_after.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChannelInput, ChannelView, Run } from '../../src/core/api';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';
import { FakeTelegram, telegramErrors, type FakeMessage, type TelegramUser } from '../fakes/telegram';

const ada: TelegramUser = { id: 111, is_bot: false, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' };
const grace: TelegramUser = { id: 222, is_bot: false, first_name: 'Grace', username: 'GRACE_h' };
const mallory: TelegramUser = { id: 999, is_bot: false, first_name: 'Mallory', username: 'mallory' };

const telegram = suite<{ factory: TestFactory; fake: FakeTelegram }>('telegram approvals');

telegram.before.each(async (context) => {
  context.fake = await FakeTelegram.start();
  context.factory = await startTestFactory();
});
telegram.after.each(async (context) => {
  await context.factory.close();
  await context.fake.close();
});

function channelInput(fake: FakeTelegram, extra: Partial<ChannelInput> = {}): ChannelInput {
  return { kind: 'telegram', name: 'Phone', url: fake.base, token: fake.token, chatId: '4242', enabled: true, events: ['run.waiting'], approvals: true, approvers: ['111', '@grace_H'], ...extra };
}

/** Waits for the `count`-th message with buttons and returns it. */
async function prompt(fake: FakeTelegram, count = 1): Promise<FakeMessage> {
  await waitFor(() => fake.callsOf('sendMessage').filter((call) => call.status === 200).length >= count, 5000, `approval message ${count}`);
  return [...fake.messages.values()][count - 1]!;
}

async function answered(fake: FakeTelegram, callbackId: string): Promise<string> {
  await waitFor(() => fake.answersTo(callbackId).length > 0, 5000, `the answer to ${callbackId}`);
  return fake.answersTo(callbackId)[0]!;
}

async function waitingRun(factory: TestFactory, choices?: { mode: 'single' | 'multiple'; options: string[] }, steps = [shell('after', 'echo done')]): Promise<Run> {
  const pipeline = await factory.pipeline([approval('review', 'Ship it?', choices), ...steps]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'Dark mode', key: 'UI-7' } });
  return factory.waitForRun(run.id, ['waiting']);
}

telegram('a press by an approver decides: the run goes on, the approval names the presser via Telegram, the press is answered and the message shows it', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const run = await waitingRun(factory, { mode: 'single', options: ['Ship it', 'Rework'] });
  const message = await prompt(fake);
  const buttons = message.reply_markup!.inline_keyboard.flat();
  assert.equal(buttons.map((button) => button.text), ['Ship it', 'Rework', 'Reject']);
  for (const button of buttons) {
    assert.ok(Buffer.byteLength(button.callback_data) <= 64, button.callback_data);
    assert.not.ok(button.callback_data.includes(run.id), 'the data names no run');
  }
  assert.match(message.text, /Dark mode/);
  const { callbackId } = fake.press(message.message_id, 'Rework', ada);
  assert.is(await answered(fake, callbackId), 'Approved');
  const done = await factory.waitForRun(run.id, ['succeeded']);
  assert.equal(done.steps[0]!.approval?.by, { name: 'Ada Lovelace', via: 'telegram' });
  assert.equal(done.steps[0]!.approval?.selected, ['2']);
  await waitFor(() => !fake.messages.get(message.message_id)!.reply_markup, 5000, 'the buttons to go');
  assert.match(fake.messages.get(message.message_id)!.text, /Approved by Ada Lovelace via Telegram: Rework$/);
});

telegram('a stranger’s press is refused and answered; an approver named by @username in another case may decide', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const run = await waitingRun(factory);
  const message = await prompt(fake);
  assert.equal(message.reply_markup!.inline_keyboard.flat().map((button) => button.text), ['Approve', 'Reject']);
  const stranger = fake.press(message.message_id, 'Approve', mallory);
  assert.match(await answered(fake, stranger.callbackId), /^Not allowed: only the approvers/);
  assert.is((await factory.api.getRun(run.id))!.status, 'waiting');
  const bot = fake.press(message.message_id, 'Approve', { ...ada, is_bot: true });
  assert.match(await answered(fake, bot.callbackId), /^Not allowed/);
  const press = fake.press(message.message_id, 'Reject', grace);
  assert.is(await answered(fake, press.callbackId), 'Rejected');
  const done = await factory.waitForRun(run.id, ['rejected']);
  assert.equal(done.steps[0]!.approval?.by, { name: 'Grace', via: 'telegram' });
});

telegram('forged callback data decides nothing: another run’s button on this message, an unknown token, a choice the step lacks', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const first = await waitingRun(factory);
  const firstMessage = await prompt(fake, 1);
  const second = await waitingRun(factory);
  const secondMessage = await prompt(fake, 2);
  const secondApprove = secondMessage.reply_markup!.inline_keyboard[0]![0]!.callback_data;
  const token = secondApprove.split(':')[0]!;
  const forged = [secondApprove, 'AAAAAAAAAAAAAAAA:a', `${token}:c1`, `${token}:d`, `${token}:a:x`, 'x'.repeat(64)];
  for (const data of forged) {
    const { callbackId } = fake.press(firstMessage.message_id, undefined, ada, data);
    assert.match(await answered(fake, callbackId), /^Not allowed/, data);
  }
  // The second message's own token with actions its step (no choices) has no buttons for.
  for (const action of ['c1', 't2', 'd']) {
    const { callbackId } = fake.press(secondMessage.message_id, undefined, ada, `${token}:${action}`);
    assert.match(await answered(fake, callbackId), /^Not allowed: this button does not belong/, action);
  }
  assert.is((await factory.api.getRun(first.id))!.status, 'waiting');
  assert.is((await factory.api.getRun(second.id))!.status, 'waiting');
  assert.is((await factory.api.getRun(second.id))!.steps[0]!.status, 'waiting');
});

telegram('a decision in the app edits the Telegram message; a press on it then says already decided by whom', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const run = await waitingRun(factory);
  const message = await prompt(fake);
  const approve = message.reply_markup!.inline_keyboard[0]![0]!.callback_data;
  await factory.api.approveStep(run.id, 'review', true, 'Looks good');
  await waitFor(() => !fake.messages.get(message.message_id)!.reply_markup, 5000, 'the message to show the decision');
  assert.match(fake.messages.get(message.message_id)!.text, /✅ Approved by You via the app — Looks good$/);
  const late = fake.press(message.message_id, undefined, ada, approve);
  assert.is(await answered(fake, late.callbackId), 'Already decided: Approved by You via the app — Looks good');
  const done = await factory.waitForRun(run.id, ['succeeded']);
  assert.equal(done.steps[0]!.approval?.by, { name: 'You', via: 'app' });
});

telegram('a press and the app deciding at once: one decision is recorded and the loser is told', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const run = await waitingRun(factory);
  const message = await prompt(fake);
  await waitFor(() => fake.polling, 5000, 'the long poll');
  const press = fake.press(message.message_id, 'Reject', ada);
  const app = await factory.api.approveStep(run.id, 'review', true).then(() => 'decided', (error: Error) => error.message);
  const answer = await answered(fake, press.callbackId);
  const done = await factory.waitForRun(run.id, ['succeeded', 'rejected']);
  if (app === 'decided') {
    assert.is(done.status, 'succeeded');
    assert.is(answer, 'Already decided by You via the app');
  } else {
    assert.match(app, /not waiting for approval/);
    assert.is(done.status, 'rejected');
    assert.is(answer, 'Rejected');
  }
});

telegram('multiple choices: options toggle, Approve selected decides with them', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const run = await waitingRun(factory, { mode: 'multiple', options: ['Docs', 'Tests', 'Changelog'] });
  const message = await prompt(fake);
  const empty = fake.press(message.message_id, 'Approve selected', ada);
  assert.is(await answered(fake, empty.callbackId), 'Choose at least one option first.');
  const docs = fake.press(message.message_id, '☐ Docs', ada);
  assert.is(await answered(fake, docs.callbackId), 'Selected: Docs');
  await waitFor(() => fake.messages.get(message.message_id)!.reply_markup!.inline_keyboard[0]![0]!.text === '☑ Docs', 5000, 'the toggle to show');
  const changelog = fake.press(message.message_id, '☐ Changelog', grace);
  assert.is(await answered(fake, changelog.callbackId), 'Selected: Docs, Changelog');
  await waitFor(() => fake.messages.get(message.message_id)!.reply_markup!.inline_keyboard[3]![0]!.text === 'Approve selected (2)', 5000, 'the count');
  const done = fake.press(message.message_id, 'Approve selected (2)', ada);
  assert.is(await answered(fake, done.callbackId), 'Approved');
  const finished = await factory.waitForRun(run.id, ['succeeded']);
  assert.equal(finished.steps[0]!.approval?.selected, ['1', '3']);
});

telegram('switching a channel’s approvals off withdraws its buttons and a press on them is told so; a channel of the same bot keeps deciding', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  const team = await factory.api.saveChannel(channelInput(fake, { name: 'Team', chatId: '5151' }));
  const run = await waitingRun(factory);
  await prompt(fake, 2);
  const messages = [...fake.messages.values()];
  const phone = messages.find((message) => message.chat.id === 4242)!;
  const teamMessage = messages.find((message) => message.chat.id === 5151)!;
  const teamApprove = teamMessage.reply_markup!.inline_keyboard[0]![0]!.callback_data;
  await factory.api.saveChannel({ ...channelInput(fake, { name: 'Team', chatId: '5151' }), id: team.id, token: '', approvals: false });
  await waitFor(() => !fake.messages.get(teamMessage.message_id)!.reply_markup, 5000, 'the team’s buttons to go');
  assert.match(fake.messages.get(teamMessage.message_id)!.text, /Dark mode[\s\S]*\n\nButtons withdrawn: this channel no longer takes approvals from Telegram\. Decide in the app\.$/);
  assert.ok(fake.messages.get(phone.message_id)!.reply_markup, 'the other channel keeps its buttons');
  // A press that was on its way (the old button's data, on the team's message): told, not taken.
  const late = fake.press(teamMessage.message_id, undefined, ada, teamApprove);
  assert.is(await answered(fake, late.callbackId), 'Not taken: this channel no longer takes approvals from Telegram. Decide in the app.');
  assert.is((await factory.api.getRun(run.id))!.status, 'waiting');
  const press = fake.press(phone.message_id, 'Approve', ada);
  assert.is(await answered(fake, press.callbackId), 'Approved');
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => !fake.messages.get(phone.message_id)!.reply_markup, 5000, 'the phone’s message to show the decision');
  assert.match(fake.messages.get(teamMessage.message_id)!.text, /Buttons withdrawn/, 'a withdrawn message is left as it is');
});

telegram('a bot with a webhook is an error in words: testChannel says so, and so does the channel', async ({ factory, fake }) => {
  fake.webhookUrl = 'https://bots.example.com/hook/secret-path';
  const tested = await factory.api.testChannel(channelInput(fake));
  assert.is(tested.ok, false);
  assert.match(tested.error!, /webhook set \(to bots\.example\.com\).*deleteWebhook/);
  assert.not.ok(tested.error!.includes('secret-path'));
  const saved = await factory.api.saveChannel(channelInput(fake));
  let view: ChannelView | undefined;
  await waitFor(async () => {
    view = (await factory.api.snapshot()).channels.find((channel) => channel.id === saved.id);
    return Boolean(view?.approvalsError);
  }, 5000, 'the channel to show the error');
  assert.match(view!.approvalsError!, /webhook set.*deleteWebhook/);
  assert.not.ok(view!.approvalsError!.includes(fake.token));
  const inbox = (await factory.api.snapshot()).inbox;
  assert.ok(inbox.some((item) => item.kind === 'channel.error' && /webhook/.test(item.body ?? '')), JSON.stringify(inbox));
});

telegram('another program polling the same bot is an error in words; a 429 with retry_after is waited out and polling goes on', async ({ factory, fake }) => {
  fake.script('getUpdates', telegramErrors.tooManyRequests(1), telegramErrors.otherPoller);
  const saved = await factory.api.saveChannel(channelInput(fake));
  await waitFor(async () => /another program is reading this bot/.test((await factory.api.snapshot()).channels.find((channel) => channel.id === saved.id)?.approvalsError ?? ''), 5000, 'the 409 in words');
  assert.is(fake.callsOf('getUpdates')[0]!.status, 429);
});

telegram('stop aborts the long poll', async ({ factory, fake }) => {
  await factory.api.saveChannel(channelInput(fake));
  await waitFor(() => fake.polling, 5000, 'the long poll');
  const poll = fake.callsOf('getUpdates')[0]!;
  assert.equal(poll.body.allowed_updates, ['callback_query']);
  assert.ok((poll.body.timeout as number) >= 30 && (poll.body.timeout as number) <= 50);
  await factory.close();
  await waitFor(() => !fake.polling, 5000, 'the poll to be aborted');
});

telegram('saving approvals needs approvers: user ids or @usernames', async ({ factory, fake }) => {
  const refused = await factory.api.saveChannel(channelInput(fake, { approvers: [] })).then(() => undefined, (error: Error) => error);
  assert.match(String(refused?.message), /approver.*anyone in the chat/);
  const bad = await factory.api.saveChannel(channelInput(fake, { approvers: ['ada lovelace', '12ab'] })).then(() => undefined, (error: Error) => error);
  assert.match(String(bad?.message), /user id such as 123456789 or an @username/);
  const noEvent = await factory.api.saveChannel(channelInput(fake, { events: ['run.failed'] })).then(() => undefined, (error: Error) => error);
  assert.match(String(noEvent?.message), /run\.waiting/);
  const saved = await factory.api.saveChannel(channelInput(fake, { approvers: ['111', '@Ada_L', 'grace_h', '111'] }));
  assert.equal(saved.approvers, ['111', '@ada_l', '@grace_h']);
  assert.is(saved.approvals, true);
});

telegram.run();

// ─── Restarts ───

const restart = suite('telegram approvals across a restart');

restart('a restart keeps the offset; a re-sent update and an old press on a retried run decide nothing twice', async () => {
  const fake = await FakeTelegram.start();
  const dir = makeTempDir('factory-telegram');
  let factory = await startTestFactory({ dir });
  try {
    await factory.api.saveChannel(channelInput(fake));
    const run = await waitingRun(factory, undefined, [shell('check', 'exit 3')]);
    const first = await prompt(fake, 1);
    const press = fake.press(first.message_id, 'Approve', ada);
    assert.is(await answered(fake, press.callbackId), 'Approved');
    await factory.waitForRun(run.id, ['failed']);
    await waitFor(() => fake.callsOf('getUpdates').some((call) => call.body.offset === press.updateId + 1), 5000, 'the offset to move on');
    await factory.close();

    factory = await startTestFactory({ dir });
    const polls = fake.callsOf('getUpdates').length;
    await waitFor(() => fake.callsOf('getUpdates').length > polls && fake.polling, 5000, 'the first poll after the restart');
    assert.is(fake.callsOf('getUpdates')[polls]!.body.offset, press.updateId + 1);
    await factory.api.retryRun(run.id, 'review');
    await factory.waitForRun(run.id, ['waiting']);
    const second = await prompt(fake, 2);
    await waitFor(() => fake.polling, 5000, 'the long poll');
    // Telegram misbehaving: the taken update again, as it was; then a marker press to know it was read.
    fake.deliver(press.update);
    const marker = fake.press(second.message_id, 'Approve', mallory);
    await answered(fake, marker.callbackId);
    assert.is(fake.answersTo(press.callbackId).length, 1, 'the re-sent update is skipped');
    // The old press again under a new update id: its message's approval was decided.
    const again = { ...press.update, update_id: fake.newUpdateId() };
    await waitFor(() => fake.polling, 5000, 'the long poll');
    fake.deliver(again);
    await waitFor(() => fake.answersTo(press.callbackId).length === 2, 5000, 'the old press answered');
    assert.match(fake.answersTo(press.callbackId)[1]!, /^Already decided: Approved by Ada Lovelace via Telegram/);
    const current = (await factory.api.getRun(run.id))!;
    assert.is(current.status, 'waiting');
    assert.is(current.steps[0]!.status, 'waiting');
    const reject = fake.press(second.message_id, 'Reject', ada);
    assert.is(await answered(fake, reject.callbackId), 'Rejected');
    await factory.waitForRun(run.id, ['rejected']);
  } finally {
    await factory.close();
    await fake.close();
    removeTempDir(dir);
  }
});

restart.run();
