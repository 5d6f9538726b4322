// What a notification says, and how each channel kind wants it written (PROVIDERS §5). Pure: no I/O.
// A Notice is written once, for every kind; the payload functions turn it into one service's body.

import type { ChannelEvent, Run, RunStatus } from '../core/api';

/** A notification's event: a channel event, or `test` for the message `testChannel` sends. */
type NoticeEvent = ChannelEvent | 'test';

/** One notification, before any channel formats it. `text` is plain text, several lines. */
export interface Notice {
  event: NoticeEvent;
  title: string;
  text: string;
  /** A link to the run, when the app knows a URL a person can open. */
  url?: string;
  pipelineId?: string;
  runId?: string;
  status?: RunStatus;
}

/** Discord refuses `content` longer than this. */
const discordContentLimit = 2000;
/** Telegram refuses `text` longer than this. */
export const telegramTextLimit = 4096;
/** Slack accepts much more, but a notification stays short. */
const slackTextLimit = 3000;
/** An approval step's rendered message is cut to this in a notification. */
const stepMessageLimit = 1000;
/** Errors are cut to this in a notification. */
const errorLimit = 500;

const titlePrefixes: Record<NoticeEvent, string> = {
  'run.succeeded': 'Succeeded',
  'run.failed': 'Failed',
  'run.waiting': 'Waiting for approval',
  'trigger.error': 'Trigger error',
  test: 'Test',
};

/** ntfy `Tags`: emoji short codes shown before the title. */
const ntfyTags: Record<NoticeEvent, string> = {
  'run.succeeded': 'white_check_mark',
  'run.failed': 'x',
  'run.waiting': 'hourglass_flowing_sand',
  'trigger.error': 'warning',
  test: 'wave',
};

/**
 * The notice for a run event: the title names the outcome and the issue (or the pipeline when the
 * run has no issue); the text names the pipeline, the issue with its key, the status, the error of
 * a failed run, and for `run.waiting` the waiting step, its rendered message and its numbered
 * choices (from the run's pipeline snapshot, when the step has choices). `runUrl` becomes `url`.
 */
export function noticeForRun(run: Run, event: ChannelEvent, runUrl?: string): Notice {
  const subject = run.issue?.title?.trim() || run.pipelineName;
  const lines = [`Pipeline: ${run.pipelineName}`];
  if (run.issue?.title) lines.push(`Issue: ${run.issue.title}${run.issue.key ? ` (${run.issue.key})` : ''}`);
  lines.push(`Status: ${run.status}`);
  if (event === 'run.failed') {
    const error = run.error ?? run.steps.find((step) => step.status === 'failed' && step.error)?.error;
    if (error) lines.push(`Error: ${cut(error, errorLimit)}`);
  }
  if (event === 'run.waiting') lines.push(...waitingLines(run));
  const notice: Notice = { event, title: `${titlePrefixes[event]}: ${subject}`, text: lines.join('\n'), pipelineId: run.pipelineId, runId: run.id, status: run.status };
  if (runUrl) notice.url = runUrl;
  return notice;
}

/** The waiting step's name, its rendered message and its choices as `1 = Ship it, 2 = Rework`. */
function waitingLines(run: Run): string[] {
  const step = run.steps.find((candidate) => candidate.status === 'waiting');
  if (!step) return [];
  const lines = [`Step: ${step.name}`];
  if (step.message?.trim()) lines.push(cut(step.message.trim(), stepMessageLimit));
  const definition = run.pipeline?.steps.find((candidate) => candidate.id === step.id);
  const options = definition?.kind === 'approval' ? definition.choices?.options ?? [] : [];
  if (options.length > 0) lines.push(`Choices: ${options.map((label, index) => `${index + 1} = ${label}`).join(', ')}`);
  return lines;
}

/** The notice for a trigger that could not poll or deliver; `triggerName` goes in the title. */
export function noticeForTriggerError(text: string, triggerName?: string): Notice {
  return { event: 'trigger.error', title: triggerName ? `${titlePrefixes['trigger.error']}: ${triggerName}` : titlePrefixes['trigger.error'], text: cut(text, errorLimit) };
}

/** The message `testChannel` sends. */
export function testNotice(): Notice {
  return { event: 'test', title: 'Factory test message', text: 'This channel works: Factory notifications will arrive here.' };
}

// ─── Slack incoming webhook: {"text"} in mrkdwn ───

/** Slack: `{ text }`, the title in bold and the run link as `<url|Open run>`; `& < >` escaped. */
export function slackPayload(notice: Notice): { text: string } {
  const parts = [`*${escapeSlack(notice.title)}*`, escapeSlack(notice.text)];
  if (notice.url) parts.push(`<${notice.url.replace(/\|/g, '%7C').replace(/>/g, '%3E')}|Open run>`);
  return { text: cut(parts.join('\n'), slackTextLimit) };
}

function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// ─── Discord webhook: {"content"} ───

/**
 * Discord: `{ content, allowed_mentions }`, content at most 2000 characters (cut with …). Mentions
 * are switched off, so an issue title with `@everyone` pings nobody.
 */
export function discordPayload(notice: Notice): { content: string; allowed_mentions: { parse: string[] } } {
  const link = notice.url ? `\n${notice.url}` : '';
  const content = cut(`**${notice.title}**\n${notice.text}`, discordContentLimit - link.length) + link;
  return { content, allowed_mentions: { parse: [] } };
}

// ─── ntfy: plain body plus headers ───

/**
 * ntfy: the plain text as the body, with `Title`, `Tags` (an emoji for the event) and `Click` (the
 * run link) headers. Header values must be Latin-1 without line breaks: a title with other
 * characters is sent RFC 2047 encoded (`=?UTF-8?B?…?=`), which ntfy decodes.
 */
export function ntfyMessage(notice: Notice): { body: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { Title: headerValue(notice.title), Tags: ntfyTags[notice.event] };
  if (notice.url) headers.Click = notice.url;
  return { body: notice.text, headers };
}

function headerValue(text: string): string {
  const line = text.replace(/[\r\n\t]+/g, ' ').trim();
  if (/^[\x20-\x7e]*$/.test(line)) return line;
  let binary = '';
  for (const byte of new TextEncoder().encode(line)) binary += String.fromCharCode(byte);
  return `=?UTF-8?B?${btoa(binary)}?=`;
}

// ─── Telegram Bot API sendMessage ───

/**
 * Telegram: `{ chat_id, text, link_preview_options }`, text at most 4096 characters. Plain text (no
 * parse_mode), so nothing needs escaping; the run link is the last line.
 */
export function telegramPayload(notice: Notice, chatId: string): { chat_id: string; text: string; link_preview_options: { is_disabled: true } } {
  const link = notice.url ? `\n${notice.url}` : '';
  const text = cut(`${notice.title}\n${notice.text}`, telegramTextLimit - link.length) + link;
  return { chat_id: chatId, text, link_preview_options: { is_disabled: true } };
}

// ─── Generic webhook ───

/**
 * The body a generic webhook channel receives (POST, `Content-Type: application/json`):
 *
 *   {
 *     "event": "run.succeeded" | "run.failed" | "run.waiting" | "trigger.error" | "test",
 *     "title": "Failed: Crash on save",     // one line
 *     "text": "Pipeline: Feature\n...",      // plain text, several lines
 *     "url": "http://…/runs/run_…" | null,   // a link to the run, when known
 *     "runId": "run_…",                      // run events only
 *     "pipelineId": "pl_…",                  // run events only
 *     "status": "failed",                    // run events only: the run's status
 *     "at": 1700000000000                    // when it was sent, in ms since 1970
 *   }
 *
 * Any 2xx answer counts as delivered.
 */
interface WebhookPayload {
  event: NoticeEvent;
  title: string;
  text: string;
  url: string | null;
  runId?: string;
  pipelineId?: string;
  status?: RunStatus;
  at: number;
}

export function webhookPayload(notice: Notice, at: number): WebhookPayload {
  const payload: WebhookPayload = { event: notice.event, title: notice.title, text: notice.text, url: notice.url ?? null, at };
  if (notice.runId) payload.runId = notice.runId;
  if (notice.pipelineId) payload.pipelineId = notice.pipelineId;
  if (notice.status) payload.status = notice.status;
  return payload;
}

/** `text` at most `limit` characters (UTF-16 units), cut with … and never inside a surrogate pair. */
export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = Math.max(0, limit - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + '…';
}
