// What telegram.json keeps for Telegram approvals, and how it is read back: per bot (botKey), the
// offset of the next getUpdates; per sent approval message, its prompt (see telegram-prompts.ts).
// Also which channels take approvals, and the withdrawal of the buttons of those that stop.

import { createHash } from 'node:crypto';
import type { Channel } from '../core/api';
import { isRecord } from '../core/validate';
import { botApiBase } from './telegram-bot-api';
import { isPromptToken, withdrawnLine, type TelegramPrompt } from './telegram-prompts';

/** Prompts kept after their decision was shown (so a late press still hears "already decided"). */
const shownPromptLimit = 1000;

export interface TelegramState {
  /** Per bot (see botKey): the offset of the next getUpdates, last update_id + 1. */
  offsets: Record<string, number>;
  /** Sent approval messages by token. */
  prompts: Record<string, TelegramPrompt>;
}

/** One bot: its API base and token, hashed (the token is never stored twice). */
export function botKey(channel: Channel): string {
  return createHash('sha256').update(`${botApiBase(channel)}\n${channel.token ?? ''}`).digest('hex').slice(0, 24);
}

/** telegram.json as read: unknown fields dropped, malformed prompts skipped. */
export function readState(raw: unknown): TelegramState {
  const state: TelegramState = { offsets: {}, prompts: {} };
  if (!isRecord(raw)) return state;
  if (isRecord(raw.offsets)) {
    for (const [key, value] of Object.entries(raw.offsets)) if (typeof value === 'number' && Number.isSafeInteger(value)) state.offsets[key] = value;
  }
  if (isRecord(raw.prompts)) {
    for (const [token, value] of Object.entries(raw.prompts)) {
      if (!isPromptToken(token) || !isRecord(value)) continue;
      const prompt = value as unknown as TelegramPrompt;
      if (typeof prompt.channelId !== 'string' || typeof prompt.runId !== 'string' || typeof prompt.stepId !== 'string' || typeof prompt.messageId !== 'number' || typeof prompt.text !== 'string') continue;
      state.prompts[token] = prompt;
    }
  }
  return state;
}

/** The tokens of the prompts whose decision is not shown on their message yet. */
export function unshownPrompts(state: TelegramState): string[] {
  return Object.keys(state.prompts).filter((token) => !state.prompts[token]!.shown);
}

/** Keeps the latest `shownPromptLimit` shown prompts; prompts still waiting are always kept. */
export function pruneShownPrompts(state: TelegramState): void {
  const shown = Object.entries(state.prompts).filter(([, prompt]) => prompt.shown).sort(([, a], [, b]) => a.sentAt - b.sentAt);
  for (const [token] of shown.slice(0, Math.max(0, shown.length - shownPromptLimit))) delete state.prompts[token];
}

/** True for an enabled Telegram channel whose approval notices carry buttons. */
export function takesApprovals(channel: Channel): boolean {
  return channel.kind === 'telegram' && channel.enabled && channel.approvals === true && typeof channel.token === 'string' && channel.token !== '';
}

/**
 * Gives the waiting prompts of channels that no longer take approvals (switched off, disabled,
 * removed) the withdrawn outcome; returns their tokens, whose messages are to be edited to show it.
 */
export function withdrawPrompts(state: TelegramState, channels: readonly Channel[]): string[] {
  return unshownPrompts(state).filter((token) => {
    const prompt = state.prompts[token]!;
    const channel = channels.find((candidate) => candidate.id === prompt.channelId);
    if (prompt.outcome || (channel && takesApprovals(channel))) return false;
    prompt.outcome = withdrawnLine;
    return true;
  });
}
