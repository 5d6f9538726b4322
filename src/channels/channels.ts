// Notification channels: saving, deleting and testing them (spec "Channels and inbox"), and
// delivering notices in the background. A send never delays or fails a run: `notify` only queues;
// retryable failures are retried with backoff, and a channel that cannot deliver leaves one inbox item.

import type { Channel, ChannelEvent, ChannelKind, ChannelView, TestResult } from '../core/api';
import { channelEvents } from '../core/api';
import { NotFoundError, ValidationError, errorMessage, quote, type ValidationIssue } from '../core/errors';
import { newId } from '../core/ids';
import { setTimer } from '../core/timers';
import { isRecord } from '../core/validate';
import type { ConfigService } from '../engine/config';
import type { Inbox } from './inbox';
import { testNotice, type Notice } from './message';
import { sendNotice, type DesktopNotify, type SendResult } from './senders';
import type { TelegramApprovals } from './telegram-approvals';
import { readApprovers } from './telegram-prompts';

const channelKinds: readonly ChannelKind[] = ['slack', 'discord', 'ntfy', 'telegram', 'webhook', 'desktop'];
/** Kinds that post to a URL the user must give (ntfy: server and topic). */
const kindsNeedingUrl: readonly ChannelKind[] = ['slack', 'discord', 'ntfy', 'webhook'];
/** Kinds that use `token` (ntfy: optional access token; Telegram: the bot token, required). */
const kindsWithToken: readonly ChannelKind[] = ['ntfy', 'telegram'];
const nameLimit = 100;
const chatIdPattern = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;

/** Waits before the 2nd, 3rd and 4th try; a larger `retryAfterMs` from the service wins. */
export const retryDelaysMs: readonly number[] = [1000, 4000, 15000];
/** A service asking for a longer pause than this is not retried. */
const maxRetryAfterMs = 5 * 60_000;
/** Notices waiting for one channel; more are dropped (one inbox item says so). */
const maxQueuedPerChannel = 100;

/**
 * A channel as the UI sees it: the token replaced by `hasToken`. URLs are kept: the UI edits them,
 * and only the owner's own signed-in session sees the snapshot. Error texts never carry them.
 */
export type { ChannelView } from '../core/api';

export type ChannelSend = (channel: Channel, notice: Notice) => Promise<SendResult>;

interface ChannelServiceOptions {
  config: ConfigService;
  inbox: Pick<Inbox, 'add'>;
  now?: () => number;
  /** Waits between retries; tests pass one that records instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Sends one notice once (default: `sendNotice`). */
  send?: ChannelSend;
  desktopNotify?: DesktopNotify;
  /** Telegram approval buttons: sends approval notices with them, and says why they cannot be read. */
  approvals?: Pick<TelegramApprovals, 'intercept' | 'status'>;
}

export class ChannelService {
  private readonly config: ConfigService;
  private readonly inbox: Pick<Inbox, 'add'>;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly send: ChannelSend;
  private readonly approvals: ChannelServiceOptions['approvals'];
  /** Per channel id: the tail of its delivery chain, and how many notices wait in it. */
  private readonly queues = new Map<string, { tail: Promise<void>; waiting: number; dropped: boolean }>();

  constructor(options: ChannelServiceOptions) {
    this.config = options.config;
    this.inbox = options.inbox;
    const now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimer(resolve, ms)));
    this.send = options.send ?? ((channel, notice) => sendNotice(channel, notice, { now, desktopNotify: options.desktopNotify }));
    this.approvals = options.approvals;
  }

  /** The channels for the snapshot: no tokens (see ChannelView). */
  views(): ChannelView[] {
    return this.config.current.channels.map((channel) => this.view(channel));
  }

  private view(channel: Channel): ChannelView {
    const approvalsError = this.approvals?.status(channel.id);
    return { ...toView(channel), ...(approvalsError ? { approvalsError } : {}) };
  }

  /**
   * Creates (empty or missing id) or replaces a channel. Throws ValidationError naming each bad
   * field, NotFoundError for an unknown id. Saving without a token keeps the stored one.
   */
  saveChannel(input: unknown): Promise<ChannelView> {
    return this.config.update((config) => {
      const id = idOf(input);
      const stored = id ? config.channels.find((channel) => channel.id === id) : undefined;
      if (id && !stored) throw new NotFoundError(`No channel with id ${quote(id)}`);
      const channel = validateChannel(input, stored, 'Channel not saved:');
      const saved: Channel = { ...channel, id: stored?.id ?? newId('ch') };
      const channels = stored ? config.channels.map((candidate) => (candidate.id === saved.id ? saved : candidate)) : [...config.channels, saved];
      return { config: { ...config, channels }, result: this.view(saved) };
    });
  }

  /** Removes a channel; notices still queued for it are dropped. NotFoundError for an unknown id. */
  deleteChannel(id: unknown): Promise<void> {
    return this.config.update((config) => {
      if (!config.channels.some((channel) => channel.id === id)) throw new NotFoundError(`No channel with id ${quote(id)}`);
      return { config: { ...config, channels: config.channels.filter((channel) => channel.id !== id) }, result: undefined };
    });
  }

  /**
   * Validates `input` (saved or not) and sends "Factory test message" once, now, without retries.
   * With the id of a saved channel and no token, the stored token is used. Throws ValidationError
   * for bad input; a failed send is `{ ok: false, error }`.
   */
  async testChannel(input: unknown): Promise<TestResult> {
    const id = idOf(input);
    const stored = id ? this.config.current.channels.find((channel) => channel.id === id) : undefined;
    const channel: Channel = { ...validateChannel(input, stored, 'Channel not tested:'), id: stored?.id ?? '' };
    const result = await this.trySend(channel, testNotice());
    return result.ok ? { ok: true } : { ok: false, error: result.error };
  }

  /** True when some enabled channel takes `event` (so a caller can skip building its notice). */
  wants(event: ChannelEvent): boolean {
    return this.config.current.channels.some((channel) => channel.enabled && channel.events.includes(event));
  }

  /**
   * Queues `notice` for every enabled channel that takes `event` and whose pipelineIds is empty or
   * includes `notice.pipelineId`. Returns at once and never throws: delivery happens in the
   * background, one notice at a time per channel, in order.
   */
  notify(event: ChannelEvent, notice: Notice): void {
    for (const channel of this.config.current.channels) {
      if (!channel.enabled || !channel.events.includes(event)) continue;
      const pipelines = channel.pipelineIds ?? [];
      if (pipelines.length > 0 && (!notice.pipelineId || !pipelines.includes(notice.pipelineId))) continue;
      this.enqueue(channel, notice);
    }
  }

  /** Resolves when every queued notice has been delivered or given up (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()].map((queue) => queue.tail));
  }

  private enqueue(channel: Channel, notice: Notice): void {
    const queue = this.queues.get(channel.id) ?? { tail: Promise.resolve(), waiting: 0, dropped: false };
    if (queue.waiting >= maxQueuedPerChannel) {
      if (!queue.dropped) {
        queue.dropped = true;
        void this.report(channel.name, `More than ${maxQueuedPerChannel} notifications were waiting for this channel; newer ones were dropped.`);
      }
      return;
    }
    queue.waiting += 1;
    const tail = queue.tail.then(() => this.deliver(channel.id, notice)).finally(() => {
      queue.waiting -= 1;
      if (queue.waiting === 0 && this.queues.get(channel.id) === queue) this.queues.delete(channel.id);
    });
    queue.tail = tail;
    this.queues.set(channel.id, queue);
  }

  /** Up to 1 + retryDelaysMs.length tries; the channel is looked up again before each (edits apply, deletes stop it). */
  private async deliver(channelId: string, notice: Notice): Promise<void> {
    let lastError = '';
    let name = channelId;
    for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
      const channel = this.config.current.channels.find((candidate) => candidate.id === channelId);
      if (!channel || !channel.enabled) return;
      name = channel.name;
      const result = await this.trySend(channel, notice);
      if (result.ok) return;
      lastError = result.error;
      if (!result.retryable || attempt === retryDelaysMs.length) break;
      const retryAfter = result.retryAfterMs ?? 0;
      if (retryAfter > maxRetryAfterMs) break;
      await this.sleep(Math.max(retryDelaysMs[attempt]!, retryAfter));
    }
    await this.report(name, lastError);
  }

  private async trySend(channel: Channel, notice: Notice): Promise<SendResult> {
    try {
      return (await this.approvals?.intercept(channel, notice)) ?? (await this.send(channel, notice));
    } catch (error) {
      return { ok: false, error: errorMessage(error), retryable: false };
    }
  }

  private async report(channelName: string, error: string): Promise<void> {
    await this.inbox.add({ kind: 'channel.error', title: `Notification failed: ${channelName}`, body: error }).catch(() => undefined);
  }
}

function toView(channel: Channel): ChannelView {
  const { token, ...rest } = channel;
  return { ...rest, hasToken: typeof token === 'string' && token.length > 0 };
}

function idOf(input: unknown): string | undefined {
  const id = isRecord(input) ? input.id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * A clean channel (without id) from `input`, or ValidationError listing every bad field after
 * `prefix`. `stored` lends its token when the input has none.
 */
export function validateChannel(input: unknown, stored: Channel | undefined, prefix: string): Omit<Channel, 'id'> {
  if (!isRecord(input)) throw new ValidationError(`A channel must be an object, not ${quote(input)}`, prefix);
  const issues: ValidationIssue[] = [];
  const problem = (field: string, message: string) => issues.push({ field, message });

  const kind = input.kind as ChannelKind;
  if (!channelKinds.includes(kind)) problem('kind', `The kind must be one of ${channelKinds.join(', ')}, not ${quote(input.kind)}`);

  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name) problem('name', `The name is required, not ${quote(input.name)}`);
  else if (name.length > nameLimit) problem('name', `The name must be at most ${nameLimit} characters`);

  const url = typeof input.url === 'string' ? input.url.trim() : input.url === undefined || input.url === null ? '' : undefined;
  if (url === undefined) problem('url', `The URL must be a text, not ${quote(input.url)}`);
  else if (url === '' && kindsNeedingUrl.includes(kind)) problem('url', kind === 'ntfy' ? 'The URL is required: the ntfy server and topic, such as https://ntfy.sh/my-topic' : `The URL is required for a ${kind} channel`);
  else if (url !== '' && kind !== 'desktop') {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    // Quoted through the scheme and host only: the path of a webhook URL is its secret.
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) problem('url', `The URL must be an http or https URL, not ${quote(parsed ? parsed.protocol : url.slice(0, 12) + '…')}`);
    else if (kind === 'ntfy' && parsed.pathname.replace(/\/+/g, '') === '') problem('url', `The URL must include the topic, as in ${parsed.origin}/my-topic`);
  }

  const given = typeof input.token === 'string' ? input.token.trim() : undefined;
  if (input.token !== undefined && input.token !== null && typeof input.token !== 'string') problem('token', 'The token must be a text');
  const token = kindsWithToken.includes(kind) ? given || (stored?.kind === kind ? stored.token : undefined) : undefined;
  if (kind === 'telegram' && !token) problem('token', 'The token is required: the bot token from @BotFather');
  if (token && /\s/.test(token)) problem('token', 'The token must not contain spaces or line breaks');

  const chatId = typeof input.chatId === 'number' && Number.isInteger(input.chatId) ? String(input.chatId) : typeof input.chatId === 'string' ? input.chatId.trim() : undefined;
  if (kind === 'telegram') {
    if (!chatId) problem('chatId', `The chat id is required for a telegram channel, not ${quote(input.chatId)}`);
    else if (!chatIdPattern.test(chatId)) problem('chatId', `The chat id must be a number such as -1001234567890 or a @channelname, not ${quote(chatId)}`);
  }

  const enabled = input.enabled === undefined ? true : input.enabled;
  if (typeof enabled !== 'boolean') problem('enabled', `The switch must be true or false, not ${quote(input.enabled)}`);

  const events = input.events;
  if (!Array.isArray(events)) problem('events', `The events must be a list of ${channelEvents.join(', ')}, not ${quote(events)}`);
  else events.forEach((event, index) => {
    if (!channelEvents.includes(event)) problem(`events.${index}`, `Each event must be one of ${channelEvents.join(', ')}, not ${quote(event)}`);
  });

  // Telegram approval buttons: without approvers anyone in the chat could press them.
  const approvals = input.approvals === undefined || input.approvals === null ? false : input.approvals;
  const approvers = readApprovers(input.approvers);
  if (typeof approvals !== 'boolean') problem('approvals', `The approvals switch must be true or false, not ${quote(input.approvals)}`);
  else if (approvals && kind !== 'telegram') problem('approvals', 'Only a Telegram channel can carry approval buttons');
  for (const message of approvers.problems) problem('approvers', message);
  if (approvals === true && kind === 'telegram' && approvers.problems.length === 0 && approvers.approvers.length === 0) {
    problem('approvers', 'Name at least one approver (a Telegram user id or @username) to turn approval buttons on: without approvers anyone in the chat could press Approve');
  }
  if (approvals === true && kind === 'telegram' && Array.isArray(events) && !events.includes('run.waiting')) {
    problem('events', 'Approval buttons go on approval notices: tick "A run waits for approval" (run.waiting)');
  }

  const pipelineIds = input.pipelineIds;
  if (pipelineIds !== undefined && pipelineIds !== null && !(Array.isArray(pipelineIds) && pipelineIds.every((id) => typeof id === 'string' && id !== ''))) {
    problem('pipelineIds', `The pipeline list must be a list of pipeline ids, not ${quote(pipelineIds)}`);
  }

  if (issues.length > 0) throw new ValidationError(issues, prefix);
  const channel: Omit<Channel, 'id'> = { kind, name, enabled: enabled as boolean, events: [...new Set(events as ChannelEvent[])] };
  if (url && kind !== 'desktop') channel.url = url;
  if (token) channel.token = token;
  if (kind === 'telegram') channel.chatId = chatId;
  if (kind === 'telegram' && approvals === true) channel.approvals = true;
  if (kind === 'telegram' && approvers.approvers.length > 0) channel.approvers = approvers.approvers;
  if (Array.isArray(pipelineIds) && pipelineIds.length > 0) channel.pipelineIds = [...new Set(pipelineIds as string[])];
  return channel;
}
