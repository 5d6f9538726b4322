// One Telegram Bot API call (PROVIDERS §5 and §9): POST <base>/bot<token>/<method> with a JSON body,
// answered `{ ok: true, result }` or `{ ok: false, error_code, description, parameters? }`. The bot
// token is part of the URL: it never appears in an error (httpRequest scrubs it from every text).

import type { Channel } from '../core/api';
import { FactoryError, errorMessage } from '../core/errors';
import { isRecord } from '../core/validate';
import { httpRequest, redactUrl, retryAfterMs } from '../net/http';
import { defaultTelegramApi } from './senders';

/** Answers are small (a message, a list of at most 100 updates); more is cut and fails to parse. */
const answerByteLimit = 1024 * 1024;

/**
 * Telegram refused a call, or it never got an answer. `code` is Telegram's `error_code` (HTTP
 * status), 0 for a network error or an answer that is not the Bot API's; `retryAfterMs` comes from
 * `parameters.retry_after` (429). The message quotes Telegram's `description`, never the token.
 */
export class TelegramError extends FactoryError {
  override name = 'TelegramError';
  constructor(message: string, readonly code: number, readonly description: string, readonly retryAfterMs?: number) {
    super(message);
  }

  /** 409 "Conflict: can't use getUpdates method while webhook is active…". */
  get webhookActive(): boolean {
    return this.code === 409 && /webhook/i.test(this.description);
  }
}

export interface BotCallOptions {
  signal?: AbortSignal;
  /** The whole exchange (a long poll: its timeout plus a margin). Default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

/** The API base of a channel: its `url`, else api.telegram.org, without a trailing slash. */
export function botApiBase(channel: Pick<Channel, 'url'>): string {
  return (channel.url || defaultTelegramApi).replace(/\/+$/, '');
}

/**
 * Calls `method` with `params` as the bot of `channel` and resolves Telegram's `result`. Rejects
 * with TelegramError: Telegram's own words for a refusal, the network's for no answer.
 */
export async function callBotApi<T = unknown>(channel: Pick<Channel, 'url' | 'token'>, method: string, params: Record<string, unknown>, options: BotCallOptions = {}): Promise<T> {
  const token = channel.token ?? '';
  let answer;
  try {
    answer = await httpRequest({
      url: `${botApiBase(channel)}/bot${token}/${method}`, method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params), service: 'Telegram', secrets: [token], timeoutMs: options.timeoutMs ?? 10_000,
      maxBytes: answerByteLimit, cutAnswer: true, ...(options.signal ? { signal: options.signal } : {}),
    }, options.fetch ? { fetch: options.fetch } : {});
  } catch (error) {
    throw new TelegramError(errorMessage(error), 0, '');
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  if (isRecord(body) && body.ok === true && answer.status < 300) return body.result as T;
  const description = isRecord(body) && typeof body.description === 'string' ? body.description.slice(0, 300) : '';
  const parameters = isRecord(body) && isRecord(body.parameters) ? body.parameters : {};
  const waitSeconds = typeof parameters.retry_after === 'number' && parameters.retry_after >= 0 ? parameters.retry_after : undefined;
  const retryAfter = waitSeconds !== undefined ? waitSeconds * 1000 : retryAfterMs(answer.headers, (options.now ?? Date.now)());
  const words = description ? `Telegram answered ${method} with HTTP ${answer.status}: ${description}` : `Telegram answered ${method} with HTTP ${answer.status} and no Bot API answer: is ${redactUrl(botApiBase(channel))} the right API address?`;
  throw new TelegramError(words, description ? answer.status : 0, description, retryAfter);
}
