// A fake Telegram Bot API (PROVIDERS §5, §9) on a real node:http server on 127.0.0.1, speaking its
// formats: POST /bot<token>/<method> with JSON, answered {"ok":true,"result":…} or
// {"ok":false,"error_code":…,"description":…,"parameters"?}. It keeps messages (with their inline
// keyboards) and a queue of updates: getUpdates holds the request until an update comes or its
// `timeout` passes, an offset confirms (drops) the updates below it, a second getUpdates ends the
// first with 409, a set webhook makes getUpdates 409. Tests press buttons (callback_query updates),
// script misbehaviour (429 with parameters.retry_after) and read every call.

import { createServer, type Server, type ServerResponse } from 'node:http';

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

export interface Button {
  text: string;
  callback_data: string;
}

export interface FakeMessage {
  message_id: number;
  chat: { id: number; type: string };
  date: number;
  text: string;
  reply_markup?: { inline_keyboard: Button[][] };
}

export interface FakeCall {
  method: string;
  body: Record<string, unknown>;
  status: number;
}

interface HeldPoll {
  response: ServerResponse;
  timer: NodeJS.Timeout;
  offset: number | undefined;
  limit: number;
}

type Reply = { status: number; body: unknown };

const ok = (result: unknown): Reply => ({ status: 200, body: { ok: true, result } });
const error = (status: number, description: string, parameters?: Record<string, unknown>): Reply => ({
  status, body: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) },
});

export const telegramErrors = {
  unauthorized: error(401, 'Unauthorized'),
  tooManyRequests: (seconds: number) => error(429, `Too Many Requests: retry after ${seconds}`, { retry_after: seconds }),
  webhookActive: error(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"),
  otherPoller: error(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'),
  notModified: error(400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message'),
  queryTooOld: error(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid'),
};

export class FakeTelegram {
  readonly calls: FakeCall[] = [];
  readonly messages = new Map<number, FakeMessage>();
  /** Updates not yet confirmed by an offset. */
  readonly queue: Record<string, unknown>[] = [];
  /** A webhook URL makes getUpdates answer 409 (as Telegram does). */
  webhookUrl = '';
  private nextUpdateId = 900_000;
  private nextMessageId = 40;
  private nextCallbackId = 1;
  private held: HeldPoll | undefined;
  private readonly scripted = new Map<string, Reply[]>();
  private readonly answeredQueries = new Set<string>();
  private readonly openQueries = new Set<string>();

  private constructor(private readonly server: Server, readonly base: string, readonly token: string) {}

  static async start(token = '123456:FAKE-BOT-TOKEN'): Promise<FakeTelegram> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as { port: number };
    const fake = new FakeTelegram(server, `http://127.0.0.1:${port}`, token);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => fake.handle(request.url ?? '', Buffer.concat(chunks).toString('utf8'), response));
    });
    return fake;
  }

  /** True while a getUpdates request is held open. */
  get polling(): boolean {
    return this.held !== undefined;
  }

  /** The calls of one method, in order. */
  callsOf(method: string): FakeCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** The next calls of `method` get these answers instead of the normal one. */
  script(method: string, ...replies: Reply[]): void {
    this.scripted.set(method, [...(this.scripted.get(method) ?? []), ...replies]);
  }

  /** Presses the button labelled `label` on `messageId` as `from`; `data` overrides the button's data (a forged press). */
  press(messageId: number, label: string | undefined, from: TelegramUser, data?: string): { updateId: number; callbackId: string; update: Record<string, unknown> } {
    const message = this.messages.get(messageId);
    if (!message) throw new Error(`No message ${messageId}`);
    const button = message.reply_markup?.inline_keyboard.flat().find((candidate) => candidate.text === label);
    if (data === undefined && !button) throw new Error(`No button ${label} on message ${messageId}: ${JSON.stringify(message.reply_markup)}`);
    const callbackId = `cb${this.nextCallbackId++}`;
    const update = {
      update_id: this.nextUpdateId++,
      callback_query: {
        id: callbackId, from, chat_instance: '-8123456789',
        message: { message_id: message.message_id, from: { id: 1, is_bot: true, first_name: 'Factory' }, chat: message.chat, date: message.date, text: message.text },
        data: data ?? button!.callback_data,
      },
    };
    this.deliver(update);
    return { updateId: update.update_id, callbackId, update };
  }

  /** Queues an update as it is (a replay, or any other update) and wakes a held poll. */
  deliver(update: Record<string, unknown>): void {
    const query = update.callback_query as { id?: string } | undefined;
    if (query?.id) this.openQueries.add(query.id);
    this.queue.push(update);
    this.flushHeld();
  }

  /** The update id the next update gets (for a test that re-sends an old press under a new id). */
  newUpdateId(): number {
    return this.nextUpdateId++;
  }

  /** The answerCallbackQuery texts given for a callback id. */
  answersTo(callbackId: string): string[] {
    return this.callsOf('answerCallbackQuery').filter((call) => call.body.callback_query_id === callbackId).map((call) => String(call.body.text ?? ''));
  }

  private handle(url: string, text: string, response: ServerResponse): void {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.split('?')[0]!);
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return this.reply(response, '', body, error(400, 'Bad Request: invalid JSON'));
    }
    if (!match) return this.reply(response, '', body, error(404, 'Not Found'));
    const [, token, method] = match as unknown as [string, string, string];
    if (token !== this.token) return this.reply(response, method, body, telegramErrors.unauthorized);
    const scripted = this.scripted.get(method)?.shift();
    if (scripted) return this.reply(response, method, body, scripted);
    switch (method) {
      case 'getUpdates':
        return this.getUpdates(body, response);
      case 'sendMessage':
        return this.reply(response, method, body, this.sendMessage(body));
      case 'answerCallbackQuery': {
        const id = String(body.callback_query_id ?? '');
        if (!this.openQueries.has(id) || this.answeredQueries.has(id)) return this.reply(response, method, body, telegramErrors.queryTooOld);
        this.answeredQueries.add(id);
        return this.reply(response, method, body, ok(true));
      }
      case 'editMessageText':
      case 'editMessageReplyMarkup':
        return this.reply(response, method, body, this.edit(method, body));
      case 'getWebhookInfo':
        return this.reply(response, method, body, ok({ url: this.webhookUrl, has_custom_certificate: false, pending_update_count: this.queue.length }));
      case 'deleteWebhook':
        this.webhookUrl = '';
        return this.reply(response, method, body, ok(true));
      default:
        return this.reply(response, method, body, error(404, 'Not Found'));
    }
  }

  private reply(response: ServerResponse, method: string, body: Record<string, unknown>, reply: Reply): void {
    this.calls.push({ method, body, status: reply.status });
    if (response.writableEnded || response.destroyed) return;
    response.writeHead(reply.status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(reply.body));
  }

  private sendMessage(body: Record<string, unknown>): Reply {
    const chatId = Number(body.chat_id);
    const text = typeof body.text === 'string' ? body.text : '';
    if (!Number.isFinite(chatId)) return error(400, 'Bad Request: chat not found');
    if (!text.trim()) return error(400, 'Bad Request: message text is empty');
    if (text.length > 4096) return error(400, 'Bad Request: message is too long');
    const markup = this.readMarkup(body.reply_markup);
    if ('error' in markup) return markup.error;
    const message: FakeMessage = { message_id: ++this.nextMessageId, chat: { id: chatId, type: chatId < 0 ? 'supergroup' : 'private' }, date: 1735000000, text, ...(markup.value ? { reply_markup: markup.value } : {}) };
    this.messages.set(message.message_id, message);
    return ok(message);
  }

  private edit(method: string, body: Record<string, unknown>): Reply {
    const message = this.messages.get(Number(body.message_id));
    if (!message || Number(body.chat_id) !== message.chat.id) return error(400, 'Bad Request: message to edit not found');
    const markup = this.readMarkup(body.reply_markup);
    if ('error' in markup) return markup.error;
    const text = method === 'editMessageText' ? String(body.text ?? '') : message.text;
    const keyboard = markup.value && markup.value.inline_keyboard.length > 0 ? markup.value : undefined;
    if (text === message.text && JSON.stringify(keyboard) === JSON.stringify(message.reply_markup)) return telegramErrors.notModified;
    message.text = text;
    if (keyboard) message.reply_markup = keyboard;
    else delete message.reply_markup;
    return ok(message);
  }

  /** An InlineKeyboardMarkup as Telegram checks it: callback_data of 1-64 bytes. */
  private readMarkup(markup: unknown): { value: FakeMessage['reply_markup'] } | { error: Reply } {
    if (markup === undefined) return { value: undefined };
    const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
    if (!Array.isArray(rows)) return { error: error(400, 'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array') };
    for (const button of rows.flat() as Button[]) {
      const size = Buffer.byteLength(String(button.callback_data ?? ''));
      if (size < 1 || size > 64) return { error: error(400, 'Bad Request: BUTTON_DATA_INVALID') };
      if (!String(button.text ?? '').trim()) return { error: error(400, 'Bad Request: text buttons are unallowed in the inline keyboard') };
    }
    return { value: { inline_keyboard: rows as Button[][] } };
  }

  private getUpdates(body: Record<string, unknown>, response: ServerResponse): void {
    if (this.webhookUrl) return this.reply(response, 'getUpdates', body, telegramErrors.webhookActive);
    // A second poller ends the first one's request, as Telegram does.
    if (this.held) {
      const held = this.held;
      this.held = undefined;
      clearTimeout(held.timer);
      this.reply(held.response, 'getUpdates', {}, telegramErrors.otherPoller);
    }
    const offset = typeof body.offset === 'number' ? body.offset : undefined;
    if (offset !== undefined) {
      // "An update is considered confirmed as soon as getUpdates is called with an offset higher than its update_id."
      for (let index = this.queue.length - 1; index >= 0; index--) if ((this.queue[index]!.update_id as number) < offset) this.queue.splice(index, 1);
    }
    const limit = typeof body.limit === 'number' ? body.limit : 100;
    const timeout = typeof body.timeout === 'number' ? body.timeout : 0;
    this.calls.push({ method: 'getUpdates', body, status: 0 });
    const held: HeldPoll = { response, offset, limit, timer: setTimeout(() => this.answerHeld(held), timeout * 1000) };
    response.on('close', () => {
      if (this.held === held) {
        clearTimeout(held.timer);
        this.held = undefined;
      }
    });
    this.held = held;
    if (this.queue.length > 0) this.answerHeld(held);
  }

  private flushHeld(): void {
    if (this.held && this.queue.length > 0) this.answerHeld(this.held);
  }

  private answerHeld(held: HeldPoll): void {
    if (this.held === held) this.held = undefined;
    clearTimeout(held.timer);
    if (held.response.writableEnded || held.response.destroyed) return;
    held.response.writeHead(200, { 'Content-Type': 'application/json' });
    held.response.end(JSON.stringify({ ok: true, result: this.queue.slice(0, held.limit) }));
  }

  /** Stops listening and drops every open connection, a held poll included. */
  async close(): Promise<void> {
    if (this.held) clearTimeout(this.held.timer);
    this.held = undefined;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
