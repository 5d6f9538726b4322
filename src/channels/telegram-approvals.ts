// Approvals decided with Telegram buttons (issue 26.4, PROVIDERS §9). A Telegram channel with
// `approvals: true` sends its approval notices with inline buttons; one long poll per bot reads
// the presses (getUpdates, no public address needed), takes a press only from the channel's
// `approvers`, decides through RunService.approveStep (first answer wins), answers every press,
// and edits the message to show the decision, whichever surface made it (the run's change event).
// A channel that stops taking approvals has its waiting messages' buttons withdrawn.
//
// Durable in telegram.json: per bot, the next update offset (so a restart neither replays nor
// loses a press); per sent message, its prompt (run, step, chat, message; see telegram-prompts.ts).
// Order per update: decide, then store offset + 1, then ask for more. A crash in between makes
// Telegram hand the press again; the step no longer waits, so it decides nothing twice.
// telegram-approvals-state.ts reads and trims that file; telegram-approvals-presses.ts says which
// presses are taken; telegram-approvals-words.ts says what Telegram's failures mean.

import { randomBytes } from 'node:crypto';
import type { Channel, Run } from '../core/api';
import { ConflictError, errorMessage } from '../core/errors';
import { sleep } from '../core/timers';
import { isRecord } from '../core/validate';
import type { ConfigService } from '../engine/config';
import type { EventHub } from '../engine/events';
import type { RunService } from '../engine/runs';
import type { Inbox } from './inbox';
import { telegramPayload, type Notice } from './message';
import type { SendResult } from './senders';
import { callBotApi, TelegramError, type BotCallOptions } from './telegram-bot-api';
import { botKey, pruneShownPrompts, readState, takesApprovals, unshownPrompts, withdrawPrompts, type TelegramState } from './telegram-approvals-state';
import { decisionRefusal, onMessage, refusePress } from './telegram-approvals-presses';
import { failure, hostOf, pollFailure, webhookWords } from './telegram-approvals-words';
import {
  decidedText, deciderOf, outcomeLine, parseCallbackData, promptKeyboard, promptText, withdrawnAnswer,
  type TelegramPrompt, type TelegramUser,
} from './telegram-prompts';

/** Long-poll seconds asked of Telegram (its HTTP request is given 15 s more). */
const defaultPollSeconds = 50;
/** Waits after consecutive failed polls; the last repeats. A longer retry_after wins. */
const defaultBackoffMs: readonly number[] = [1000, 2000, 5000, 15_000, 60_000];
/** A rate limit asking for longer than this is waited this long, then asked again. */
const longestWaitMs = 3600_000;
/** Failed polls in a row before a passing network problem becomes an inbox item. */
const reportAfterFailures = 3;

interface TelegramApprovalsOptions {
  config: Pick<ConfigService, 'current' | 'subscribe'>;
  inbox: Pick<Inbox, 'add'>;
  /** telegram.json: read once at open, written (coalesced) after each change. */
  store: { load(): Promise<unknown>; save(content: () => unknown): Promise<void> };
  /** A channel's approval status changed (the snapshot shows it). */
  statusChanged?: () => void;
  pollSeconds?: number;
  backoffMs?: readonly number[];
  fetch?: typeof fetch;
  now?: () => number;
}

/** What the approvals need of the engine, given at `start` (the engine is made after the channels). */
interface ApprovalEngine {
  runs: Pick<RunService, 'approveStep' | 'getRun'>;
  hub: Pick<EventHub, 'on'>;
}

interface Poller {
  controller: AbortController;
  done: Promise<void>;
}

export class TelegramApprovals {
  private engine: ApprovalEngine | undefined;
  private readonly pollers = new Map<string, Poller>();
  /** Per bot: why its presses cannot be read now. */
  private readonly errors = new Map<string, string>();
  /** Per prompt token: the chain of its settling (edits of one message happen one at a time). */
  private readonly settling = new Map<string, Promise<void>>();
  private readonly unsubscribers: (() => void)[] = [];
  private readonly now: () => number;
  private stopped = false;

  private constructor(private readonly options: TelegramApprovalsOptions, private readonly state: TelegramState) {
    this.now = options.now ?? Date.now;
  }

  /** Reads telegram.json (a broken file throws, naming it). Nothing is polled before `start`. */
  static async open(options: TelegramApprovalsOptions): Promise<TelegramApprovals> {
    return new TelegramApprovals(options, readState(await options.store.load()));
  }

  /** Starts a poll per bot of the approval channels, follows config changes and the runs' changes. */
  start(engine: ApprovalEngine): void {
    this.engine = engine;
    this.unsubscribers.push(this.options.config.subscribe(() => this.reconcile()));
    this.unsubscribers.push(engine.hub.on('run', (run) => this.runChanged(run)));
    this.reconcile();
    // Decisions whose edit did not reach Telegram before the last stop are shown now.
    for (const token of this.unshown()) this.settle(token);
  }

  /** Aborts every poll in flight and waits for them and for the edits under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    const pollers = [...this.pollers.values()];
    this.pollers.clear();
    for (const poller of pollers) poller.controller.abort();
    await Promise.all(pollers.map((poller) => poller.done));
    await Promise.all([...this.settling.values()]);
    await this.save();
  }

  /** Why this channel's buttons cannot be read now; undefined when they can (or it has none). */
  status(channelId: string): string | undefined {
    const channel = this.options.config.current.channels.find((candidate) => candidate.id === channelId);
    return channel && takesApprovals(channel) ? this.errors.get(botKey(channel)) : undefined;
  }

  /**
   * Sends what a Telegram approval channel sends differently, else resolves undefined (the usual
   * send applies): a waiting run's notice with buttons; for a test, first the webhook check.
   */
  async intercept(channel: Channel, notice: Notice): Promise<SendResult | undefined> {
    if (notice.event === 'test' && channel.kind === 'telegram' && channel.approvals) return this.checkWebhook(channel);
    if (!takesApprovals(channel)) return undefined;
    if (notice.event !== 'run.waiting' || !notice.runId || !this.engine || this.stopped) return undefined;
    return this.sendPrompt(channel, notice, notice.runId);
  }

  // ─── Sending ───

  private async sendPrompt(channel: Channel, notice: Notice, runId: string): Promise<SendResult | undefined> {
    const run = await this.engine!.runs.getRun(runId);
    const step = run?.steps.find((candidate) => candidate.status === 'waiting');
    const definition = run?.pipeline?.steps.find((candidate) => candidate.id === step?.id);
    if (!run || !step || definition?.kind !== 'approval') return undefined;
    const token = randomBytes(12).toString('base64url');
    const choices = definition.choices && definition.choices.options.length > 0 ? definition.choices : undefined;
    const payload = telegramPayload(notice, channel.chatId ?? '');
    const text = promptText(payload.text);
    let sent: unknown;
    try {
      sent = await callBotApi(channel, 'sendMessage', { ...payload, text, reply_markup: promptKeyboard(token, choices) }, this.callOptions());
    } catch (error) {
      return failure(error);
    }
    const message = isRecord(sent) ? sent : {};
    const chat = isRecord(message.chat) ? message.chat.id : undefined;
    if (typeof message.message_id !== 'number' || (typeof chat !== 'number' && typeof chat !== 'string')) {
      return { ok: false, error: 'Telegram accepted the approval notice but did not say which message it is: its buttons cannot be matched to presses', retryable: false };
    }
    this.state.prompts[token] = {
      channelId: channel.id, runId: run.id, stepId: step.id, chatId: chat, messageId: message.message_id, text, sentAt: this.now(),
      ...(choices ? { choices: { mode: choices.mode, options: [...choices.options] } } : {}),
    };
    this.prune();
    await this.save();
    // Decided while the notice was on its way: no change event will come for it.
    this.settle(token);
    return { ok: true };
  }

  /** getWebhookInfo: a bot with a webhook cannot be polled, so its buttons would do nothing. */
  private async checkWebhook(channel: Channel): Promise<SendResult | undefined> {
    try {
      const info = await callBotApi(channel, 'getWebhookInfo', {}, this.callOptions());
      const url = isRecord(info) && typeof info.url === 'string' ? info.url : '';
      if (url) return { ok: false, error: webhookWords(hostOf(url)), retryable: false };
      return undefined;
    } catch (error) {
      return failure(error);
    }
  }

  // ─── Polling ───

  /**
   * One poll per bot of the enabled approval channels; polls of bots no longer used stop. The
   * waiting prompts of a channel that no longer takes approvals (switched off, disabled, removed)
   * lose their buttons, which would decide nothing now.
   */
  private reconcile(): void {
    if (this.stopped || !this.engine) return;
    const { channels } = this.options.config.current;
    for (const token of withdrawPrompts(this.state, channels)) this.settle(token);
    const wanted = new Set(channels.filter(takesApprovals).map(botKey));
    for (const [key, poller] of this.pollers) {
      if (wanted.has(key)) continue;
      poller.controller.abort();
      this.pollers.delete(key);
      this.setError(key, undefined);
    }
    for (const key of wanted) {
      if (this.pollers.has(key)) continue;
      const controller = new AbortController();
      const done = this.poll(key, controller.signal).catch((error) => console.error(`Telegram approvals: ${errorMessage(error)}`));
      this.pollers.set(key, { controller, done });
    }
  }

  /** The channels using the bot `key` now (approvers and chats are read fresh for every press). */
  private channelsOf(key: string): Channel[] {
    return this.options.config.current.channels.filter((channel) => takesApprovals(channel) && botKey(channel) === key);
  }

  private async poll(key: string, signal: AbortSignal): Promise<void> {
    const pollSeconds = this.options.pollSeconds ?? defaultPollSeconds;
    let failures = 0;
    while (!signal.aborted) {
      const channel = this.channelsOf(key)[0];
      if (!channel) return;
      const offset = this.state.offsets[key];
      try {
        const updates = await callBotApi<unknown>(channel, 'getUpdates', {
          ...(offset !== undefined ? { offset } : {}), timeout: pollSeconds, allowed_updates: ['callback_query'],
        }, this.callOptions({ signal, timeoutMs: (pollSeconds + 15) * 1000 }));
        failures = 0;
        this.setError(key, undefined);
        for (const update of Array.isArray(updates) ? updates : []) {
          if (signal.aborted) return;
          await this.takeUpdate(key, update);
        }
        for (const token of this.unshown()) this.settle(token);
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        const delay = this.pollFailed(key, channel, error, failures);
        await sleep(delay, signal);
      }
    }
  }

  /** Records why the poll failed (status, and the inbox when it lasts) and says how long to wait. */
  private pollFailed(key: string, channel: Channel, error: unknown, failures: number): number {
    const telegram = error instanceof TelegramError ? error : undefined;
    const backoff = this.options.backoffMs ?? defaultBackoffMs;
    const { words, lasting } = pollFailure(error);
    const reported = this.errors.get(key);
    this.setError(key, words);
    if (words !== reported && (lasting || failures >= reportAfterFailures)) {
      this.options.inbox.add({ kind: 'channel.error', title: `Telegram approvals: ${channel.name}`, body: words }).catch(() => undefined);
    }
    const wait = lasting ? backoff[backoff.length - 1]! : backoff[Math.min(failures - 1, backoff.length - 1)]!;
    return Math.min(Math.max(wait, telegram?.retryAfterMs ?? 0), longestWaitMs);
  }

  private setError(key: string, words: string | undefined): void {
    if (this.errors.get(key) === words) return;
    if (words === undefined) this.errors.delete(key);
    else this.errors.set(key, words);
    this.options.statusChanged?.();
  }

  /**
   * Takes one update: a press is decided and answered, anything else skipped; then the offset moves
   * past it, durably, before the next getUpdates confirms it to Telegram. An update below the
   * stored offset was taken before (Telegram handed it again): it is skipped unanswered.
   */
  private async takeUpdate(key: string, update: unknown): Promise<void> {
    const id = isRecord(update) ? update.update_id : undefined;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) return;
    const offset = this.state.offsets[key];
    if (offset !== undefined && id < offset) return;
    try {
      if (isRecord(update) && isRecord(update.callback_query)) await this.takePress(key, update.callback_query);
    } catch (error) {
      console.error(`Telegram approvals: a button press failed: ${errorMessage(error)}`);
    } finally {
      this.state.offsets[key] = id + 1;
      await this.save();
    }
  }

  /** One button press: checked (whose prompt, which message, who pressed), decided, answered. */
  private async takePress(key: string, query: Record<string, unknown>): Promise<void> {
    if (typeof query.id !== 'string') return;
    const bot = this.channelsOf(key)[0]!;
    const answer = (text: string, channel: Channel = bot) => this.answer(channel, query.id as string, text);
    const parsed = parseCallbackData(query.data);
    const prompt = parsed && Object.hasOwn(this.state.prompts, parsed.token) ? this.state.prompts[parsed.token] : undefined;
    const channel = prompt && this.channelsOf(key).find((candidate) => candidate.id === prompt.channelId);
    // A token Factory never sent, a prompt of another bot, or data pressed on another message: forged.
    if (!parsed || !prompt || !onMessage(prompt, query.message)) return answer('Not allowed: this button is not one Factory sent on this message.');
    // Factory's own button, on a channel switched off or removed since (its buttons are withdrawn).
    if (!channel) return answer(withdrawnAnswer);
    const from = isRecord(query.from) ? (query.from as unknown as TelegramUser) : undefined;
    const refused = refusePress(channel, prompt, parsed.action, from);
    if (refused) return answer(refused, channel);
    const { action } = parsed;
    if (action.kind === 'toggle') return this.toggle(parsed.token, prompt, channel, action.option, answer);
    if (action.kind === 'done' && !prompt.selected?.length) return answer('Choose at least one option first.', channel);
    const approved = action.kind !== 'reject';
    const selected = action.kind === 'choose' ? [action.option] : action.kind === 'done' ? prompt.selected : undefined;
    try {
      await this.engine!.runs.approveStep(prompt.runId, prompt.stepId, approved, undefined, selected, deciderOf(from!));
      await answer(approved ? 'Approved' : 'Rejected', channel);
    } catch (error) {
      await answer(await this.refusal(prompt, error), channel);
    }
    this.settle(parsed.token);
  }

  /** Multiple mode: turns an option on or off, and redraws the buttons. */
  private async toggle(token: string, prompt: TelegramPrompt, channel: Channel, option: string, answer: (text: string, channel: Channel) => Promise<void>): Promise<void> {
    const selected = new Set(prompt.selected ?? []);
    if (selected.has(option)) selected.delete(option);
    else selected.add(option);
    prompt.selected = [...selected].sort((a, b) => Number(a) - Number(b));
    await this.save();
    const labels = prompt.selected.map((id) => prompt.choices!.options[Number(id) - 1]);
    await answer(labels.length ? `Selected: ${labels.join(', ')}`.slice(0, 200) : 'Nothing selected', channel);
    await callBotApi(channel, 'editMessageReplyMarkup', {
      chat_id: prompt.chatId, message_id: prompt.messageId, reply_markup: promptKeyboard(token, prompt.choices, prompt.selected),
    }, this.callOptions()).catch((error) => console.error(`Telegram approvals: redrawing the buttons failed: ${errorMessage(error)}`));
  }

  /** Why a press was not taken, in words for the presser. */
  private async refusal(prompt: TelegramPrompt, error: unknown): Promise<string> {
    const run = error instanceof ConflictError ? await this.engine!.runs.getRun(prompt.runId).catch(() => undefined) : undefined;
    return decisionRefusal(error, run?.steps.find((step) => step.id === prompt.stepId)?.approval);
  }

  /** answerCallbackQuery; a press answered too late (Telegram's 400 "query is too old") is no harm. */
  private async answer(channel: Channel, queryId: string, text: string): Promise<void> {
    await callBotApi(channel, 'answerCallbackQuery', { callback_query_id: queryId, text: text.slice(0, 200) }, this.callOptions()).catch((error) => {
      if (!(error instanceof TelegramError && /query is too old|query ID is invalid/i.test(error.description))) console.error(`Telegram approvals: answering a press failed: ${errorMessage(error)}`);
    });
  }

  // ─── Showing decisions ───

  /** A run changed: its prompts whose step no longer waits are settled. */
  private runChanged(run: Run): void {
    for (const token of this.unshown()) {
      const prompt = this.state.prompts[token]!;
      if (prompt.runId !== run.id) continue;
      const step = run.steps.find((candidate) => candidate.id === prompt.stepId);
      if (step?.status !== 'waiting') this.settle(token);
    }
  }

  /** Queues the settling of one prompt behind the one under way (one edit of a message at a time). */
  private settle(token: string): void {
    const previous = this.settling.get(token) ?? Promise.resolve();
    const next = previous.then(() => this.settleNow(token)).catch((error) => console.error(`Telegram approvals: ${errorMessage(error)}`));
    this.settling.set(token, next);
    void next.then(() => {
      if (this.settling.get(token) === next) this.settling.delete(token);
    });
  }

  /**
   * When the prompt's step no longer waits: records the outcome (who decided, where, what) and
   * edits the message to show it without buttons. An edit that fails is tried again after the
   * next poll; "message is not modified" and a deleted message count as shown.
   */
  private async settleNow(token: string): Promise<void> {
    const prompt = this.state.prompts[token];
    if (!prompt || prompt.shown || !this.engine) return;
    if (!prompt.outcome) {
      const run = await this.engine.runs.getRun(prompt.runId);
      const step = run?.steps.find((candidate) => candidate.id === prompt.stepId);
      if (run && step?.status === 'waiting') return;
      prompt.outcome = outcomeLine(run, step, prompt.choices);
      await this.save();
    }
    const channel = this.options.config.current.channels.find((candidate) => candidate.id === prompt.channelId);
    if (!channel || !channel.token) {
      prompt.shown = true;
      return this.save();
    }
    try {
      await callBotApi(channel, 'editMessageText', {
        chat_id: prompt.chatId, message_id: prompt.messageId, text: decidedText(prompt, prompt.outcome), reply_markup: { inline_keyboard: [] },
      }, this.callOptions());
      prompt.shown = true;
    } catch (error) {
      if (!(error instanceof TelegramError && /message is not modified|message to edit not found|message can't be edited/i.test(error.description))) {
        console.error(`Telegram approvals: showing a decision failed: ${errorMessage(error)}`);
        return;
      }
      prompt.shown = true;
    }
    await this.save();
  }

  private unshown(): string[] {
    return unshownPrompts(this.state);
  }

  private prune(): void {
    pruneShownPrompts(this.state);
  }

  private save(): Promise<void> {
    return this.options.store.save(() => this.state).catch((error) => console.error(`Telegram approvals: saving telegram.json failed: ${errorMessage(error)}`));
  }

  private callOptions(extra: BotCallOptions = {}): BotCallOptions {
    return { ...(this.options.fetch ? { fetch: this.options.fetch } : {}), now: this.now, ...extra };
  }
}
