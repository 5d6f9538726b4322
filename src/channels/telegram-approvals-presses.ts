// Which Telegram button presses are taken, and what a refused presser is told: a press must come
// from the prompt's own message, from one of the channel's approvers, on a step still waiting, with
// a button that belongs to the approval's mode and options.

import type { Channel, StepApproval } from '../core/api';
import { ConflictError, NotFoundError, ValidationError, errorMessage } from '../core/errors';
import { isRecord } from '../core/validate';
import { isApprover, whoDecided, withdrawnAnswer, withdrawnLine, type PromptAction, type TelegramPrompt, type TelegramUser } from './telegram-prompts';

/** True when the press came from the prompt's own message in the prompt's own chat. */
export function onMessage(prompt: TelegramPrompt, message: unknown): boolean {
  if (!isRecord(message) || !isRecord(message.chat)) return false;
  return message.message_id === prompt.messageId && String(message.chat.id) === String(prompt.chatId);
}

/** Why a press from `from` on `channel` is not taken for `prompt`; undefined when it is. */
export function refusePress(channel: Channel, prompt: TelegramPrompt, action: PromptAction, from: TelegramUser | undefined): string | undefined {
  if (!isApprover(channel.approvers, from)) return 'Not allowed: only the approvers of this Factory channel can decide.';
  if (prompt.outcome === withdrawnLine) return withdrawnAnswer;
  if (prompt.outcome) return `Already decided: ${plain(prompt.outcome)}`;
  const mode = prompt.choices?.mode;
  const known = (option: string) => prompt.choices !== undefined && Number(option) <= prompt.choices.options.length;
  if ((action.kind === 'approve' && mode !== undefined) || ((action.kind === 'choose') && (mode !== 'single' || !known(action.option)))
    || ((action.kind === 'toggle' || action.kind === 'done') && mode !== 'multiple') || (action.kind === 'toggle' && !known(action.option))) {
    return 'Not allowed: this button does not belong to this approval.';
  }
  return undefined;
}

/** Why approveStep did not take a press, in words for the presser; `approval`: the step's decision, when it already has one. */
export function decisionRefusal(error: unknown, approval: StepApproval | undefined): string {
  if (error instanceof ConflictError) return approval ? `Already decided by ${whoDecided(approval.by)}` : 'Already decided: this step no longer waits for approval.';
  if (error instanceof NotFoundError) return 'This run no longer exists.';
  if (error instanceof ValidationError) return `Not taken: ${errorMessage(error)}`.slice(0, 200);
  return 'Not taken: Factory could not record the decision. Try again, or decide in the app.';
}

/** The outcome line without its leading mark, for a callback answer. */
function plain(outcome: string): string {
  return outcome.replace(/^[✅❌]\s*/u, '');
}
