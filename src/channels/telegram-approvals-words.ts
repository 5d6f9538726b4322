// What Telegram's failures mean, in words for the user: a bot with a webhook, a poll that fails
// (another reader, a refused token, the network), a send that failed (and whether to retry).

import { errorMessage } from '../core/errors';
import type { SendResult } from './senders';
import { TelegramError } from './telegram-bot-api';

/**
 * Why the presses of a bot cannot be read after a failed getUpdates, and whether that lasts until
 * the user acts (another reader: 409; a refused token: 401, 404).
 */
export function pollFailure(error: unknown): { words: string; lasting: boolean } {
  const telegram = error instanceof TelegramError ? error : undefined;
  const lasting = telegram !== undefined && (telegram.code === 409 || telegram.code === 401 || telegram.code === 404);
  let words = `Approval buttons of this channel cannot be read: ${errorMessage(error)}`;
  if (telegram?.webhookActive) words = webhookWords();
  else if (telegram?.code === 409) words = 'Approval buttons of this channel cannot be read: another program is reading this bot\'s updates (Telegram: "terminated by other getUpdates request"). Stop it, or give this channel a bot of its own.';
  else if (telegram?.code === 401 || telegram?.code === 404) words = `Approval buttons of this channel cannot be read: Telegram refused the bot token (HTTP ${telegram.code}). Check the token @BotFather gave you.`;
  return { words, lasting };
}

export function webhookWords(host?: string): string {
  return `This bot has a webhook set${host ? ` (to ${host})` : ''}, and Telegram hands a bot with a webhook no button presses: approval buttons would do nothing. Remove the webhook (the Bot API's deleteWebhook) or give this channel another bot.`;
}

export function hostOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).host : undefined;
}

export function failure(error: unknown): SendResult {
  const telegram = error instanceof TelegramError ? error : undefined;
  const code = telegram?.code ?? 0;
  const result: SendResult = { ok: false, error: errorMessage(error), retryable: code === 0 || code === 429 || code >= 500 };
  if (telegram?.retryAfterMs !== undefined) result.retryAfterMs = telegram.retryAfterMs;
  return result;
}
