// A fake of every notification service (PROVIDERS §5) on one real node:http server on 127.0.0.1:
// each path answers the way the real service does, and every request is recorded. Tests script
// other answers (errors, rate limits, a slow or an HTML answer) for the next requests to a path.
//   Slack    POST /services/<T>/<B>/<secret>      200 text `ok`
//   Discord  POST /api/webhooks/<id>/<token>      204, no body
//   Telegram POST /bot<token>/sendMessage         200 {"ok":true,"result":{…}}
//   generic  POST /hook…                          200 {"received":true}
//   ntfy     POST /<topic> (anything else)        200 {"id","time","event":"message","topic",…}

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (a slow service). */
  delayMs?: number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): FakeAnswer => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const text = (status: number, body: string): FakeAnswer => ({ status, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body });

/** The services' real answers, as documented. */
export const answers = {
  slack: {
    ok: text(200, 'ok'),
    invalidPayload: text(400, 'invalid_payload'),
    actionProhibited: text(403, 'action_prohibited'),
    noService: text(404, 'no_service'),
    channelIsArchived: text(410, 'channel_is_archived'),
  },
  discord: {
    noContent: { status: 204 } as FakeAnswer,
    emptyMessage: json(400, { message: 'Cannot send an empty message', code: 50006 }),
    unknownWebhook: json(404, { code: 10015, message: 'Unknown Webhook' }),
    rateLimited: (retryAfterSeconds: number) => json(429, { message: 'You are being rate limited.', retry_after: retryAfterSeconds, global: false }),
  },
  ntfy: {
    forbidden: json(403, { code: 40301, http: 403, error: 'forbidden', link: 'https://ntfy.sh/docs/publish/#authentication' }),
    tooManyRequests: json(429, { code: 42901, http: 429, error: 'limit reached: too many requests' }, { 'Retry-After': '7' }),
  },
  telegram: {
    chatNotFound: json(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' }),
    unauthorized: json(401, { ok: false, error_code: 401, description: 'Unauthorized' }),
    tooManyRequests: (retryAfterSeconds: number) => json(429, { ok: false, error_code: 429, description: `Too Many Requests: retry after ${retryAfterSeconds}`, parameters: { retry_after: retryAfterSeconds } }),
  },
  generic: {
    ok: json(200, { received: true }),
    serverError: text(500, 'Internal error: the database is down'),
    badGateway: { status: 502, headers: { 'Content-Type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' } as FakeAnswer,
  },
  html: { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body: '<!doctype html><html><head><title>Sign in</title></head><body>Please sign in</body></html>' } as FakeAnswer,
  slow: (delayMs: number): FakeAnswer => ({ ...text(200, 'ok'), delayMs }),
};

export class FakeNotifyServer {
  /** Every request, in order of arrival. */
  readonly requests: RecordedRequest[] = [];
  private readonly scripted = new Map<string, FakeAnswer[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private messageId = 0;

  private constructor(private readonly server: Server, readonly base: string) {}

  static async start(): Promise<FakeNotifyServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as { port: number };
    const fake = new FakeNotifyServer(server, `http://127.0.0.1:${port}`);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const recorded = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        fake.requests.push(recorded);
        fake.answer(recorded, response);
      });
    });
    return fake;
  }

  /** The full URL of `path` on this server. */
  url(path: string): string {
    return this.base + path;
  }

  /** The next requests to `path` (without its query) get these answers, in order; then the normal one. */
  script(path: string, ...scripted: FakeAnswer[]): void {
    this.scripted.set(path, [...(this.scripted.get(path) ?? []), ...scripted]);
  }

  /** The requests whose path (without the query) is `path`. */
  to(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path.split('?')[0] === path);
  }

  private answer(request: RecordedRequest, response: ServerResponse): void {
    const path = request.path.split('?')[0]!;
    const answer = this.scripted.get(path)?.shift() ?? this.normalAnswer(path, request);
    const write = () => {
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? '');
    };
    if (!answer.delayMs) return write();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      write();
    }, answer.delayMs);
    this.timers.add(timer);
  }

  private normalAnswer(path: string, request: RecordedRequest): FakeAnswer {
    if (path.startsWith('/services/')) return answers.slack.ok;
    if (path.startsWith('/api/webhooks/')) return answers.discord.noContent;
    if (path.startsWith('/hook')) return answers.generic.ok;
    const telegram = /^\/bot[^/]+\/sendMessage$/.test(path);
    if (telegram) {
      const body = JSON.parse(request.body || '{}') as { chat_id?: string; text?: string };
      return json(200, { ok: true, result: { message_id: ++this.messageId, chat: { id: Number(body.chat_id) }, date: 1700000000, text: body.text } });
    }
    const topic = path.slice(1);
    return json(200, { id: `msg${++this.messageId}`, time: 1700000000, expires: 1700043200, event: 'message', topic, message: request.body, title: request.headers.title });
  }

  /** Stops listening and drops every open connection, slow answers included. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
