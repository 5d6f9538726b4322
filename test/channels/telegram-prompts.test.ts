// The pure parts of Telegram approvals: callback data, keyboards, approvers, outcome lines.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isApprover, outcomeLine, parseCallbackData, promptKeyboard, readApprovers } from '../../src/channels/telegram-prompts';

const prompts = suite('telegram prompts');
const token = 'abcdefghijklmnop';

prompts('callback data stays within 64 bytes for 999 options, and parses back', () => {
  const options = Array.from({ length: 999 }, (_value, index) => `Option ${index + 1} ${'é'.repeat(80)}`);
  for (const mode of ['single', 'multiple'] as const) {
    for (const button of promptKeyboard(token, { mode, options }).inline_keyboard.flat()) {
      assert.ok(Buffer.byteLength(button.callback_data) <= 64, button.callback_data);
      assert.ok(parseCallbackData(button.callback_data), button.callback_data);
      assert.ok(button.text.length <= 62, button.text);
    }
  }
  assert.equal(parseCallbackData(`${token}:c12`), { token, action: { kind: 'choose', option: '12' } });
  assert.equal(parseCallbackData(`${token}:t3`), { token, action: { kind: 'toggle', option: '3' } });
});

prompts('anything Factory never sends is not callback data', () => {
  for (const data of [undefined, 42, '', token, `${token}:`, `${token}:x`, `${token}:c0`, `${token}:c1000`, `${token}:a:b`, `short:a`, `${token}x:a`, `../../..:a`, 'a'.repeat(65)]) {
    assert.is(parseCallbackData(data), undefined, String(data));
  }
});

prompts('approvers: user ids and @usernames, compared by id or by username in any case; bots never', () => {
  const { approvers, problems } = readApprovers(['111', '@Ada_L', 'grace_h', 111, '']);
  assert.equal(approvers, ['111', '@ada_l', '@grace_h']);
  assert.equal(problems, []);
  assert.ok(isApprover(approvers, { id: 111 }));
  assert.ok(isApprover(approvers, { id: 5, username: 'ADA_L' }));
  assert.not.ok(isApprover(approvers, { id: 5, username: 'ada' }));
  assert.not.ok(isApprover(approvers, { id: 111, is_bot: true }));
  assert.not.ok(isApprover([], { id: 111 }));
  assert.equal(readApprovers(['@abc', '1a', 'x y', -5]).problems.length, 4);
  assert.equal(readApprovers(Array.from({ length: 101 }, (_value, index) => String(index + 1))).problems, ['At most 100 approvers, not 101']);
});

prompts('the outcome line names the decision, who, where, the choices and the comment', () => {
  const choices = { mode: 'multiple' as const, options: ['Docs', 'Tests', 'Changelog'] };
  assert.is(outcomeLine({ status: 'queued' }, { status: 'succeeded', approval: { approved: true, selected: ['1', '3'], at: 1, by: { name: 'Ada', via: 'telegram' } } }, choices), '✅ Approved by Ada via Telegram: Docs, Changelog');
  assert.is(outcomeLine({ status: 'rejected' }, { status: 'rejected', approval: { approved: false, comment: 'needs\ntests', at: 1, by: { name: '@alice', via: 'github' } } }, undefined), '❌ Rejected by @alice via GitHub — needs tests');
  assert.is(outcomeLine({ status: 'cancelled' }, { status: 'cancelled' }, undefined), 'No longer waiting: the run was cancelled.');
  assert.is(outcomeLine(undefined, undefined, undefined), 'No longer waiting: the run was deleted.');
});

prompts.run();
