// What a Telegram approval prompt is (PROVIDERS §9): the buttons under an approval notice, the
// callback data they carry, who may press them, and the words that replace them once decided.
// Pure: no I/O. telegram-approvals.ts sends, polls and decides with these.
//
// Callback data is `<token>:<action>`: the token is 16 random characters naming one sent message
// (a prompt, kept in telegram.json with its run, step, chat and message); the action is `a`
// (approve), `r` (reject), `c<n>` (approve with option n, single mode), `t<n>` (toggle option n,
// multiple mode) or `d` (approve with the toggled options). Nothing in the data names a run: a
// press decides only what its token's prompt says, and only on that prompt's own message.

import type { ApprovalChoices, ApprovalDecider, Run, StepRun } from '../core/api';
import { cut, telegramTextLimit } from './message';

/** One approval notice with buttons, as sent. */
export interface TelegramPrompt {
  channelId: string;
  runId: string;
  stepId: string;
  /** The chat and message Telegram answered sendMessage with. */
  chatId: number | string;
  messageId: number;
  /** The notice's text as sent (the decision is added below it). */
  text: string;
  choices?: ApprovalChoices;
  /** Multiple mode: the options toggled on so far. */
  selected?: string[];
  sentAt: number;
  /** Set once the step stopped waiting: the line that replaced the buttons. */
  outcome?: string;
  /** True once Telegram took the edit showing `outcome`. */
  shown?: boolean;
}

/** The part of a Telegram `User` a press carries. */
export interface TelegramUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export type PromptAction = { kind: 'approve' } | { kind: 'reject' } | { kind: 'choose'; option: string } | { kind: 'toggle'; option: string } | { kind: 'done' };

const tokenPattern = /^[A-Za-z0-9_-]{16}$/;
const actionPattern = /^(a|r|d|[ct][1-9]\d{0,2})$/;
/** Telegram cuts button labels; long option labels are cut to this. */
const buttonLabelLimit = 60;
/** Room kept at the end of a message for the decision line. */
const outcomeRoom = 400;
/** An approver: a numeric user id, or an @username (5-32 letters, digits, underscores). */
const userIdPattern = /^\d{1,20}$/;
const usernamePattern = /^@?([A-Za-z][A-Za-z0-9_]{4,31})$/;
const approverLimit = 100;

/** The callback data of one button: at most 22 bytes, far below Telegram's 64. */
function callbackData(token: string, action: string): string {
  return `${token}:${action}`;
}

/** The token and action of a button's data; undefined for anything Factory never sends. */
export function parseCallbackData(data: unknown): { token: string; action: PromptAction } | undefined {
  if (typeof data !== 'string' || data.length > 64) return undefined;
  const [token, action, extra] = data.split(':');
  if (extra !== undefined || !token || !action || !tokenPattern.test(token) || !actionPattern.test(action)) return undefined;
  if (action === 'a') return { token, action: { kind: 'approve' } };
  if (action === 'r') return { token, action: { kind: 'reject' } };
  if (action === 'd') return { token, action: { kind: 'done' } };
  return { token, action: { kind: action[0] === 'c' ? 'choose' : 'toggle', option: action.slice(1) } };
}

/** True when `token` has the shape `newToken` makes. */
export function isPromptToken(token: string): boolean {
  return tokenPattern.test(token);
}

/**
 * The inline keyboard of a waiting prompt: Approve and Reject; with choices in single mode one
 * button per option (each approves with it) and Reject; in multiple mode one toggle per option
 * (☑ when on), then "Approve selected" and Reject.
 */
export function promptKeyboard(token: string, choices: ApprovalChoices | undefined, selected: readonly string[] = []): { inline_keyboard: { text: string; callback_data: string }[][] } {
  const button = (text: string, action: string) => ({ text, callback_data: callbackData(token, action) });
  const reject = button('Reject', 'r');
  if (!choices || choices.options.length === 0) return { inline_keyboard: [[button('Approve', 'a'), reject]] };
  const rows = choices.options.map((label, index) => {
    const id = String(index + 1);
    const text = cut(label, buttonLabelLimit);
    return [choices.mode === 'single' ? button(text, `c${id}`) : button(`${selected.includes(id) ? '☑' : '☐'} ${text}`, `t${id}`)];
  });
  if (choices.mode === 'single') return { inline_keyboard: [...rows, [reject]] };
  return { inline_keyboard: [...rows, [button(selected.length ? `Approve selected (${selected.length})` : 'Approve selected', 'd'), reject]] };
}

/** The notice text as a prompt carries it: short enough for the decision line to fit later. */
export function promptText(text: string): string {
  return cut(text, telegramTextLimit - outcomeRoom);
}

/** The message once decided: the notice, a blank line, then the outcome. */
export function decidedText(prompt: Pick<TelegramPrompt, 'text'>, outcome: string): string {
  return cut(`${prompt.text}\n\n${outcome}`, telegramTextLimit);
}

// ─── Who may press ───

/**
 * Reads a channel's `approvers`: each a numeric Telegram user id or an @username (the @ may be
 * left out; usernames are kept lowercase with their @). Returns the clean list and the problems.
 */
export function readApprovers(input: unknown): { approvers: string[]; problems: string[] } {
  if (input === undefined || input === null) return { approvers: [], problems: [] };
  const entries = typeof input === 'string' ? input.split(/[\s,]+/) : input;
  if (!Array.isArray(entries)) return { approvers: [], problems: ['The approvers must be a list of Telegram user ids or @usernames'] };
  const approvers: string[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const text = typeof entry === 'number' && Number.isInteger(entry) && entry > 0 ? String(entry) : typeof entry === 'string' ? entry.trim() : undefined;
    if (text === '') continue;
    const username = text === undefined ? null : usernamePattern.exec(text);
    if (text !== undefined && userIdPattern.test(text)) approvers.push(text);
    else if (username) approvers.push(`@${username[1]!.toLowerCase()}`);
    else problems.push(`Each approver must be a Telegram user id such as 123456789 or an @username, not ${JSON.stringify(String(text ?? entry)).slice(0, 60)}`);
  }
  const unique = [...new Set(approvers)];
  if (unique.length > approverLimit) problems.push(`At most ${approverLimit} approvers, not ${unique.length}`);
  return { approvers: unique, problems };
}

/** True when `user` is one of `approvers`: by user id, or by @username in any case. Bots never are. */
export function isApprover(approvers: readonly string[] | undefined, user: TelegramUser | undefined): boolean {
  if (!user || user.is_bot === true || typeof user.id !== 'number') return false;
  const username = typeof user.username === 'string' && user.username ? `@${user.username.toLowerCase()}` : undefined;
  return (approvers ?? []).some((approver) => approver === String(user.id) || (username !== undefined && approver.toLowerCase() === username));
}

/** How a press names its person on the approval: the name Telegram shows, else @username, else the id. */
export function deciderOf(user: TelegramUser): ApprovalDecider {
  const name = [user.first_name, user.last_name].filter((part) => typeof part === 'string' && part.trim()).join(' ').trim();
  const shown = name || (user.username ? `@${user.username}` : `Telegram user ${user.id}`);
  return { name: cut(shown, 100), via: 'telegram' };
}

// ─── The outcome line ───

const viaWords: Record<ApprovalDecider['via'], string> = { app: 'the app', github: 'GitHub', linear: 'Linear', jira: 'Jira', telegram: 'Telegram' };

/** "Ada via Telegram", or "someone" when the approval does not say. */
export function whoDecided(by: ApprovalDecider | undefined): string {
  return by ? `${by.name} via ${viaWords[by.via] ?? by.via}` : 'someone';
}

/** The line that replaces the buttons of a prompt whose channel stopped taking approvals from Telegram. */
export const withdrawnLine = 'Buttons withdrawn: this channel no longer takes approvals from Telegram. Decide in the app.';

/** The answer to a press on such a prompt. */
export const withdrawnAnswer = 'Not taken: this channel no longer takes approvals from Telegram. Decide in the app.';

/**
 * The line that replaces a prompt's buttons once its step stopped waiting, from the run as it is
 * now: "✅ Approved by Ada via Telegram: Ship it", "❌ Rejected by You via the app — needs tests",
 * or why it waits no more (cancelled, the run ended, the run is gone).
 */
export function outcomeLine(run: Pick<Run, 'status'> | undefined, step: Pick<StepRun, 'status' | 'approval'> | undefined, choices: ApprovalChoices | undefined): string {
  if (!run || !step) return 'No longer waiting: the run was deleted.';
  const approval = step.approval;
  if (approval) {
    const labels = (approval.selected ?? []).map((id) => choices?.options[Number(id) - 1]).filter((label): label is string => label !== undefined);
    const head = approval.approved ? `✅ Approved by ${whoDecided(approval.by)}` : `❌ Rejected by ${whoDecided(approval.by)}`;
    const chosen = labels.length ? `: ${labels.join(', ')}` : '';
    const comment = approval.comment?.trim() ? ` — ${cut(approval.comment.trim().replace(/\s+/g, ' '), 200)}` : '';
    return `${head}${chosen}${comment}`;
  }
  if (step.status === 'cancelled' || run.status === 'cancelled') return 'No longer waiting: the run was cancelled.';
  return `No longer waiting: the run is ${run.status}.`;
}
