// Sending one notice to one channel (PROVIDERS §5): the request each service wants, and its answer
// read back in the service's own words. One try, never a throw: retries belong to ChannelService.
// Secrets in URLs (webhook paths, bot tokens, token queries) never appear in an error.

import type { Channel } from '../core/api';
import { errorMessage } from '../core/errors';
import { isRecord } from '../core/validate';
import { httpRequest, type HttpAnswer, redactUrl, retryAfterMs, scrub, secretsOfUrl } from '../net/http';
import { discordPayload, ntfyMessage, slackPayload, telegramPayload, webhookPayload, type Notice } from './message';

export type SendResult = { ok: true } | { ok: false; error: string; retryAfterMs?: number; retryable: boolean };

/** Shows a notice on the desktop (the desktop app passes one; headless has none). */
export type DesktopNotify = (notice: Notice) => Promise<void>;

interface SendOptions {
  /** The whole exchange, answer body included, ends after this long (default 5000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  desktopNotify?: DesktopNotify;
  /** For the generic webhook's `at` and for `Retry-After` dates. */
  now?: () => number;
}

export const defaultTelegramApi = 'https://api.telegram.org';
const defaultTimeoutMs = 5000;
/** Answer bodies are read up to this many bytes; the rest is dropped. */
const answerByteLimit = 64 * 1024;
/** Characters of a generic webhook's error body quoted in the error. */
const quotedBodyLimit = 200;

const serviceNames: Record<Channel['kind'], string> = {
  slack: 'Slack',
  discord: 'Discord',
  ntfy: 'ntfy',
  telegram: 'Telegram',
  webhook: 'The webhook',
  desktop: 'The desktop',
};

interface Outgoing {
  url: string;
  headers: Record<string, string>;
  body: string;
}

type Answer = HttpAnswer;

/**
 * Sends `notice` to `channel` once. Resolves `{ ok: true }` when the service accepted it, else
 * `{ ok: false, error, retryable, retryAfterMs? }`: `error` quotes the service's own error text and
 * never a secret; `retryable` is true for 429, 5xx, network errors and timeouts; `retryAfterMs`
 * comes from `Retry-After` or the body's `retry_after`. Never rejects. A `desktop` channel succeeds
 * without doing anything unless `desktopNotify` is given.
 */
export async function sendNotice(channel: Channel, notice: Notice, options: SendOptions = {}): Promise<SendResult> {
  const secrets = secretsOf(channel);
  try {
    if (channel.kind === 'desktop') return await sendToDesktop(notice, options.desktopNotify);
    const outgoing = buildRequest(channel, notice, (options.now ?? Date.now)());
    const answer = await exchange(outgoing, channel, options);
    if ('error' in answer) return { ...answer, error: scrub(answer.error, secrets) };
    const result = readAnswer(channel, answer, outgoing.url, options.now ?? Date.now);
    return result.ok ? result : { ...result, error: scrub(result.error, secrets) };
  } catch (error) {
    // A bug or a broken port: reported, not thrown, and not retried.
    return { ok: false, error: scrub(errorMessage(error), secrets), retryable: false };
  }
}

async function sendToDesktop(notice: Notice, desktopNotify: DesktopNotify | undefined): Promise<SendResult> {
  if (!desktopNotify) return { ok: true };
  await desktopNotify(notice);
  return { ok: true };
}

/** The request for one channel kind: always a POST; JSON except for ntfy's plain-text body. */
function buildRequest(channel: Channel, notice: Notice, at: number): Outgoing {
  const json = { 'Content-Type': 'application/json' };
  switch (channel.kind) {
    case 'slack':
      return { url: channel.url ?? '', headers: json, body: JSON.stringify(slackPayload(notice)) };
    case 'discord':
      return { url: channel.url ?? '', headers: json, body: JSON.stringify(discordPayload(notice)) };
    case 'webhook':
      return { url: channel.url ?? '', headers: json, body: JSON.stringify(webhookPayload(notice, at)) };
    case 'ntfy': {
      const message = ntfyMessage(notice);
      const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8', ...message.headers };
      if (channel.token) headers.Authorization = `Bearer ${channel.token}`;
      return { url: channel.url ?? '', headers, body: message.body };
    }
    case 'telegram': {
      const base = (channel.url || defaultTelegramApi).replace(/\/+$/, '');
      return { url: `${base}/bot${channel.token ?? ''}/sendMessage`, headers: json, body: JSON.stringify(telegramPayload(notice, channel.chatId ?? '')) };
    }
    case 'desktop':
      throw new Error('A desktop channel sends no HTTP request');
  }
}

/** POSTs and reads the answer (up to answerByteLimit) within the timeout; network trouble as an error. */
async function exchange(outgoing: Outgoing, channel: Channel, options: SendOptions): Promise<Answer | { ok: false; error: string; retryable: boolean }> {
  try {
    return await httpRequest({
      url: outgoing.url, method: 'POST', headers: outgoing.headers, body: outgoing.body, service: serviceNames[channel.kind],
      timeoutMs: options.timeoutMs ?? defaultTimeoutMs, maxBytes: answerByteLimit, cutAnswer: true,
    }, options.fetch ? { fetch: options.fetch } : {});
  } catch (error) {
    return { ok: false, error: errorMessage(error), retryable: true };
  }
}

// ─── Reading the answer, per service ───

function readAnswer(channel: Channel, answer: Answer, url: string, now: () => number): SendResult {
  const service = serviceNames[channel.kind];
  const { status } = answer;
  const retryable = status === 429 || status >= 500;
  if (status >= 300 && status < 400) {
    const location = answer.headers.get('location');
    return { ok: false, error: `${service} answered with a redirect (HTTP ${status}${location ? ` to ${redactUrl(new URL(location, url).href)}` : ''}): save the URL it points to`, retryable: false };
  }
  const html = looksLikeHtml(answer);
  const body = html ? undefined : parseJson(answer.text);
  const retryAfterMs = retryAfterOf(answer, body, now);
  const failure = (error: string, isRetryable = retryable): SendResult => {
    const result: SendResult = { ok: false, error, retryable: isRetryable };
    if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
    return result;
  };
  const unexpected = `${service} answered HTTP ${status} with ${html ? 'an HTML page' : 'an unexpected body'} instead of its usual answer: is ${redactUrl(url)} the right URL?`;
  const ok = status >= 200 && status < 300;

  switch (channel.kind) {
    case 'slack': {
      // Success is the plain body `ok`; errors are plain words such as `invalid_payload`.
      if (ok) return html ? failure(unexpected, false) : { ok: true };
      return failure(html ? unexpected : `Slack answered HTTP ${status}: ${firstLine(answer.text) || 'no reason given'}`);
    }
    case 'discord': {
      // 204 without a body (200 with the message under ?wait=true); errors are JSON `message`.
      if (ok) return html || (answer.text.trim() && body === undefined) ? failure(unexpected, false) : { ok: true };
      const message = jsonText(body, 'message');
      return failure(message ? `Discord answered HTTP ${status}: ${message}` : html ? unexpected : `Discord answered HTTP ${status}${quoted(answer.text)}`);
    }
    case 'ntfy': {
      // 200 with the published message as JSON; errors are JSON `error`.
      if (ok) return body === undefined ? failure(unexpected, false) : { ok: true };
      const message = jsonText(body, 'error');
      return failure(message ? `ntfy answered HTTP ${status}: ${message}` : html ? unexpected : `ntfy answered HTTP ${status}${quoted(answer.text)}`);
    }
    case 'telegram': {
      // JSON `{ ok, result }` or `{ ok: false, error_code, description }`.
      if (ok && isRecord(body) && body.ok === true) return { ok: true };
      const description = jsonText(body, 'description');
      if (description) return failure(`Telegram answered HTTP ${status}: ${description}`);
      return failure(html || body === undefined ? unexpected : `Telegram answered HTTP ${status} without a description`, retryable);
    }
    case 'webhook': {
      if (ok) return { ok: true };
      return failure(html ? `The webhook answered HTTP ${status} with an HTML page` : `The webhook answered HTTP ${status}${quoted(answer.text)}`);
    }
    case 'desktop':
      return { ok: true };
  }
}

function looksLikeHtml(answer: Answer): boolean {
  const type = answer.headers.get('content-type') ?? '';
  return type.includes('text/html') || /^\s*<(!doctype|html|head|body)/i.test(answer.text);
}

function parseJson(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonText(body: unknown, key: string): string | undefined {
  const value = isRecord(body) ? body[key] : undefined;
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, quotedBodyLimit) : undefined;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]!.slice(0, quotedBodyLimit);
}

/** `: <first 200 characters of the body>`, or nothing for an empty body. */
function quoted(text: string): string {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  return trimmed ? `: ${trimmed.slice(0, quotedBodyLimit)}` : '';
}

/**
 * How long the service asks us to wait: the larger of `Retry-After` (seconds or an HTTP date) and
 * the body's `retry_after` (Discord, seconds with a fraction) or `parameters.retry_after` (Telegram).
 */
function retryAfterOf(answer: Answer, body: unknown, now: () => number): number | undefined {
  const candidates: number[] = [];
  const header = retryAfterMs(answer.headers, now());
  if (header !== undefined) candidates.push(header);
  if (isRecord(body)) {
    const parameters = isRecord(body.parameters) ? body.parameters : {};
    for (const value of [body.retry_after, parameters.retry_after]) {
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) candidates.push(value * 1000);
    }
  }
  return candidates.length > 0 ? Math.ceil(Math.max(...candidates)) : undefined;
}

// ─── Secrets ───

/** The secrets of a channel, as they could appear in any text: its token and the secret parts of its URL. */
function secretsOf(channel: Channel): string[] {
  return [channel.token ?? '', ...(channel.url ? secretsOfUrl(channel.url) : [])];
}
