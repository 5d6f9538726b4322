// A fake Jira on a real node:http server on 127.0.0.1 speaking Jira's REST API and webhooks (PROVIDERS §2),
// Cloud or Data Center, so the production client can be pointed at `url`:
//   - auth: Cloud `Basic base64(email:token)`, DC `Bearer <PAT>`; else 401 with a NON-JSON body (text on
//     Cloud, an HTML page on DC). serverInfo answers anonymously, as in Jira. DC has no v3: /rest/api/3 → 404.
//   - Cloud search GET|POST /rest/api/{3,2}/search/jql → {issues, nextPageToken?, isLast}: the token is ABSENT
//     on the last page (JRACLOUD-92184), an issue is only {id} without `fields`, maxResults defaults to 50 and
//     is capped at 100 with fields (5000 with id/key only), an unrestricted JQL is refused; /search is 410 Gone.
//   - DC search GET|POST /rest/api/2/search → {expand, startAt, maxResults (≤1000), total, issues}.
//   - myself, GET issue/{key}, …/comment (GET, POST, PUT …/{id}), …/transitions (GET, POST);
//     v3 bodies are ADF, v2 ones strings; Cloud refuses a string comment on v3.
//   - JQL: a real subset with Jira's error messages (parseJql, FakeJira.clause); absolute dates in UTC, the user's zone.
//   - webhooks: `payload()` in the v2 representation (as real captures show, even from Cloud); `deliver()` with
//     X-Atlassian-Webhook-* headers and X-Hub-Signature: sha256=<hex> (not -256).
// The clock starts at the current minute and moves a minute per change (`updated >= "-15m"` sees new changes,
// minute-precision JQL dates tell them apart); comments, transitions and edits bump `updated`, as in Jira.

import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

type Json = Record<string, any>;

/** `description`: plain text or ADF (served as ADF on v3, a string on v2); times in Jira's format, 2026-11-22T16:54:00.000+0000. */
export interface FakeJiraIssue {
  id: string; key: string; project: string; summary: string; description: string | Json | null;
  labels: string[]; status: string; assignee: 'me' | null; priority: string; created: string; updated: string;
}

/** Who wrote a comment: the token's user, the reporter (`other`), or someone who is neither (`stranger`). */
type Person = 'me' | 'other' | 'stranger';
interface StoredComment { id: string; issueId: string; body: unknown; author: Person; created: string; updated: string }

/** `path` without the query; `status` answered (0 until decided). */
export interface FakeJiraCall { method: string; path: string; query: Record<string, string>; headers: IncomingHttpHeaders; body: string; status: number }

/** A scripted answer: a string body is sent as it is (text/html unless `headers` say otherwise), anything else as JSON. */
export interface FakeJiraAnswer { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }

/** Answers to script, as Jira gives them. */
export const jiraAnswers = {
  /** 429 with Retry-After and the X-RateLimit-* headers (Reset is ISO `yyyy-MM-ddTHH:mmZ`). The body's wording is a guess. */
  rateLimited: (retryAfterSeconds = 5, reason = 'jira-burst-based'): FakeJiraAnswer => ({
    status: 429, body: { errorMessages: ['Rate limit exceeded.'], errors: {} }, headers: {
      'Retry-After': String(retryAfterSeconds), 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'RateLimit-Reason': reason,
      'X-RateLimit-Reset': new Date(Date.now() + retryAfterSeconds * 1000).toISOString().replace(/:\d\d\.\d+Z$/, 'Z'),
    },
  }),
  serverError: (status = 500): FakeJiraAnswer => ({ status, body: { errorMessages: ['Internal server error'], errors: {} } }),
};

const statuses: Record<string, { id: string; category: { id: number; key: string; colorName: string; name: string } }> = {
  'To Do': { id: '10000', category: { id: 2, key: 'new', colorName: 'blue-gray', name: 'To Do' } },
  'In Progress': { id: '3', category: { id: 4, key: 'indeterminate', colorName: 'yellow', name: 'In Progress' } },
  Done: { id: '10001', category: { id: 3, key: 'done', colorName: 'green', name: 'Done' } },
};
/** The workflow: from a status, [transition id, transition name, target status]. */
const workflow: Record<string, [string, string, string][]> = {
  'To Do': [['21', 'Start progress', 'In Progress'], ['31', 'Done', 'Done']],
  'In Progress': [['11', 'Stop progress', 'To Do'], ['31', 'Done', 'Done']],
  Done: [['41', 'Reopen', 'To Do']],
};
const priorities = ['Highest', 'High', 'Medium', 'Low', 'Lowest'];
const knownFields = ['summary', 'description', 'labels', 'priority', 'status', 'assignee', 'reporter', 'updated', 'created', 'project', 'issuetype', 'comment'];
const json = (status: number, body?: unknown): FakeJiraAnswer => ({ status, body });
const errors = (status: number, ...messages: string[]): FakeJiraAnswer => json(status, { errorMessages: messages, errors: {} });
const jiraTime = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');

export class FakeJira {
  readonly email = 'ada@example.com';
  readonly token: string;
  readonly me = { accountId: `712020:${randomUUID()}`, displayName: 'Ada Lovelace', emailAddress: 'ada@example.com', name: 'ada', key: 'JIRAUSER10000' };
  /** Someone else, who comments through `addComment(…, {author: 'other'})`. */
  readonly other = { accountId: `712020:${randomUUID()}`, displayName: 'Grace Hopper', emailAddress: 'grace@example.com', name: 'grace', key: 'JIRAUSER10001' };
  /** Neither reporter nor assignee of any issue. */
  readonly stranger = { accountId: `712020:${randomUUID()}`, displayName: 'Sam Stranger', emailAddress: 'sam@example.com', name: 'sam', key: 'JIRAUSER10002' };
  readonly calls: FakeJiraCall[] = [];
  private readonly projects = new Map<string, { id: string; key: string; name: string }>();
  /** Every issue, oldest first (change them through `update`). */
  readonly issues: FakeJiraIssue[] = [];
  private readonly commentList: StoredComment[] = [];
  private readonly lastChangelog = new WeakMap<FakeJiraIssue, Json>();
  private readonly scripted: { when: (call: FakeJiraCall) => boolean; answer: FakeJiraAnswer }[] = [];
  private readonly holds: { when: (call: FakeJiraCall) => boolean; release: Promise<void> }[] = [];
  /** The time the next change gets (a minute later each change); tests may set it, e.g. to the past for old issues. */
  clock = Math.floor(Date.now() / 60_000) * 60_000;
  private nextId = { issue: 10001, comment: 10100, changelog: 10200, project: 10000 };

  private constructor(private readonly server: Server, readonly url: string, readonly mode: 'cloud' | 'datacenter', readonly deploymentType: string) {
    this.token = mode === 'cloud' ? `ATATT3xFfGF0${randomBytes(24).toString('base64url')}` : randomBytes(33).toString('base64');
    this.addProject('KAN', 'Kanban');
    this.addProject('ABC', 'Alphabet');
  }

  /** `mode` defaults to cloud. On Data Center, serverInfo's `deploymentType` is "DataCenter" unless told "Server" (what many real DC sites answer). */
  static async start(options: { mode?: 'cloud' | 'datacenter'; deploymentType?: 'Server' | 'DataCenter' } = {}): Promise<FakeJira> {
    let fake: FakeJira | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        fake!.handle(request.method ?? 'GET', request.url ?? '/', request.headers, Buffer.concat(chunks).toString('utf8'))
          .catch((failure: unknown) => errors(500, String(failure)))
          .then(({ status, body, headers }) => {
            if (response.destroyed) return;
            const text = body === undefined || status === 204 ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
            const type = text === undefined ? {} : { 'content-type': typeof body === 'string' ? 'text/html;charset=UTF-8' : 'application/json;charset=UTF-8' };
            const own = Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
            response.writeHead(status, { ...type, 'x-arequestid': `${Date.now() % 100000}x1`, ...own }).end(text);
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const mode = options.mode ?? 'cloud';
    fake = new FakeJira(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`, mode, mode === 'cloud' ? 'Cloud' : options.deploymentType ?? 'DataCenter');
    return fake;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  // ─── State ───

  addProject(key: string, name = key): void {
    if (!this.projects.has(key)) this.projects.set(key, { id: String(this.nextId.project++), key, name });
  }

  /** A new issue, keyed PROJECT-n (KAN by default); created = updated = the next minute of the fake clock. */
  addIssue(fields: { project?: string; summary: string; description?: string | Json; labels?: string[]; status?: string; assignee?: 'me' | null; priority?: string }): FakeJiraIssue {
    const project = fields.project ?? 'KAN';
    this.addProject(project);
    if (fields.status !== undefined && !statuses[fields.status]) throw new Error(`fake Jira: no status ${fields.status}`);
    const at = this.tick();
    const issue: FakeJiraIssue = {
      id: String(this.nextId.issue++), key: `${project}-${this.issues.filter((other) => other.project === project).length + 1}`, project,
      summary: fields.summary, description: fields.description ?? null, labels: [...(fields.labels ?? [])], status: fields.status ?? 'To Do',
      assignee: fields.assignee ?? null, priority: fields.priority ?? 'Medium', created: at, updated: at,
    };
    this.issues.push(issue);
    return issue;
  }

  /** Changes an issue as a person would in Jira; bumps `updated`. Returns the changelog a webhook carries (labels as ONE space-joined string). */
  update(issue: FakeJiraIssue, change: { summary?: string; labels?: string[]; status?: string; assignee?: 'me' | null }): Json {
    const items: Json[] = [];
    const item = (field: string, from: string | null, fromString: string | null, to: string | null, toString: string | null) => items.push({ field, fieldtype: 'jira', fieldId: field, from, fromString, to, toString });
    if (change.status !== undefined && !statuses[change.status]) throw new Error(`fake Jira: no status ${change.status}`);
    const ref = (who: 'me' | null) => (who ? (this.mode === 'cloud' ? this.me.accountId : this.me.name) : null);
    if (change.summary !== undefined && change.summary !== issue.summary) item('summary', null, issue.summary, null, change.summary);
    if (change.labels !== undefined) item('labels', null, issue.labels.join(' '), null, change.labels.join(' '));
    if (change.status !== undefined && change.status !== issue.status) item('status', statuses[issue.status]!.id, issue.status, statuses[change.status]!.id, change.status);
    if (change.assignee !== undefined && change.assignee !== issue.assignee) item('assignee', ref(issue.assignee), issue.assignee && this.me.displayName, ref(change.assignee), change.assignee && this.me.displayName);
    Object.assign(issue, Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)), change.labels ? { labels: [...change.labels] } : {});
    return this.changed(issue, items);
  }

  /** The comments on an issue, oldest first: `body` as stored (ADF on Cloud, a string on DC), `text` its plain text. */
  comments(issue: FakeJiraIssue): { id: string; body: unknown; text: string }[] {
    return this.commentList.filter((comment) => comment.issueId === issue.id).map(({ id, body }) => ({ id, body, text: plain(body) }));
  }

  /** A comment made in Jira by a person (default: `other`); bumps `updated`. */
  addComment(issue: FakeJiraIssue, text: string, options: { author?: Person } = {}): { id: string; body: unknown; text: string } {
    const comment = this.storeComment(issue, this.mode === 'cloud' ? adf(text) : text, options.author ?? 'other');
    return { id: comment.id, body: comment.body, text };
  }

  /** The next request matching `when` (default: any) gets `answer` instead, after being recorded; the fake's state is untouched. */
  script(answer: FakeJiraAnswer, when: (call: FakeJiraCall) => boolean = () => true): void {
    this.scripted.push({ when, answer });
  }

  /**
   * What the server sends instead of its own answer to every request, for a server (or a proxy in
   * front of it) that goes wrong every time: echoing the request, paging without end. Unset: the
   * fake's own answer.
   */
  misbehave: ((call: FakeJiraCall, answer: FakeJiraAnswer) => FakeJiraAnswer) | undefined;
  /**
   * Data Center's most issues per search page (`jira.search.views.default.max`, 1000 by default; sites
   * lower it): a search asking for more gets this many, and `maxResults` in the answer says so.
   */
  searchLimit = 1000;

  /** Requests matching `when` are carried out, but answered only once `release` resolves. */
  hold(when: (call: FakeJiraCall) => boolean, release: Promise<void>): void {
    this.holds.push({ when, release });
  }

  // ─── Webhooks ───

  /** A webhook body as Jira sends it, in the v2 representation (description a string, self links under /rest/api/2/). `jira:issue_updated`
   *  carries `changelog` (default: the issue's last change); `comment_created` the issue's last comment and, as in Jira, no `user` nor `issue_event_type_name`. */
  payload(event: 'jira:issue_created' | 'jira:issue_updated' | 'jira:issue_deleted' | 'comment_created', issue: FakeJiraIssue, changelog?: object): Json {
    const base = { timestamp: this.clock, webhookEvent: event };
    const issueJson = this.issueJson(issue, 2, new Set(knownFields.filter((field) => field !== 'comment')));
    if (event === 'comment_created') {
      const comment = this.commentList.filter((candidate) => candidate.issueId === issue.id).at(-1);
      if (!comment) throw new Error('payload(comment_created): the issue has no comment');
      return { ...base, comment: this.commentJson(comment, issue, 2), issue: issueJson };
    }
    const log = (changelog ?? (event === 'jira:issue_updated' ? this.lastChangelog.get(issue) : undefined)) as Json | undefined;
    const fields = new Set((log?.items ?? []).map((item: Json) => item.field));
    const type = event === 'jira:issue_created' ? 'issue_created' : event === 'jira:issue_deleted' ? 'issue_deleted'
      : fields.has('status') ? 'issue_generic' : fields.size === 1 && fields.has('assignee') ? 'issue_assigned' : 'issue_updated';
    return { ...base, issue_event_type_name: type, user: this.userJson('me', 2), issue: issueJson, ...(log ? { changelog: log } : {}) };
  }

  /** Posts a webhook as Jira does. `secret` signs the raw body (X-Hub-Signature: sha256=<hex>); `signature` overrides it (null: none). */
  async deliver(url: string, payload: object, options: { identifier?: string; retry?: number; secret?: string; signature?: string | null; token?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json; charset=UTF-8', 'User-Agent': 'Atlassian Webhook HTTP Client',
      'X-Atlassian-Webhook-Identifier': options.identifier ?? randomUUID(), 'X-Atlassian-Webhook-Flow': 'Primary',
      ...(options.retry ? { 'X-Atlassian-Webhook-Retry': String(options.retry) } : {}),
    };
    const signature = options.signature === undefined ? (options.secret ? `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}` : undefined) : options.signature;
    if (signature !== null && signature !== undefined) headers['X-Hub-Signature'] = signature;
    const target = options.token === undefined ? url : `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(options.token)}`;
    const response = await fetch(target, { method: 'POST', headers: { ...headers, ...options.headers }, body });
    const text = await response.text();
    return { status: response.status, body: parse(text) ?? (text || undefined) };
  }

  // ─── HTTP ───

  private async handle(method: string, target: string, headers: IncomingHttpHeaders, text: string): Promise<FakeJiraAnswer> {
    const parsed = new URL(target, 'http://fake');
    const call: FakeJiraCall = { method, path: parsed.pathname, query: Object.fromEntries(parsed.searchParams), headers, body: text, status: 0 };
    this.calls.push(call);
    const index = this.scripted.findIndex((entry) => entry.when(call));
    const own = index >= 0 ? this.scripted.splice(index, 1)[0]!.answer : this.answer(call, parsed.searchParams);
    const answer = this.misbehave ? this.misbehave(call, own) : own;
    if (index >= 0 && answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    call.status = answer.status;
    for (const held of this.holds.filter((entry) => entry.when(call))) await held.release;
    return answer;
  }

  private notFound(path: string): FakeJiraAnswer {
    return this.mode === 'cloud' ? errors(404, 'Not Found') : json(404, { message: `null for uri: ${this.url}${path}`, 'status-code': 404 });
  }

  private answer(call: FakeJiraCall, query: URLSearchParams): FakeJiraAnswer {
    const match = /^\/rest\/api\/([23])(\/.*)$/.exec(call.path);
    if (!match || (this.mode === 'datacenter' && match[1] === '3')) return this.notFound(call.path);
    const version = Number(match[1]) as 2 | 3;
    const path = match[2]!.replace(/\/$/, '');
    const { method } = call;
    if (path === '/serverInfo' && method === 'GET') return json(200, this.serverInfo());
    if (!this.signedIn(String(call.headers.authorization ?? ''))) {
      if (this.mode === 'cloud') return { status: 401, body: 'Client must be authenticated to access this resource.', headers: { 'Content-Type': 'text/html;charset=UTF-8' } };
      return { status: 401, body: '<!DOCTYPE html>\n<html lang="en"><head><title>Unauthorized (401)</title></head><body><h1>Unauthorized (401)</h1><p>Encountered a &quot;401 - Unauthorized&quot; error while loading this page.</p></body></html>', headers: { 'X-Seraph-LoginReason': 'AUTHENTICATED_FAILED', 'X-AUSERNAME': 'anonymous' } };
    }
    const body: Json = call.body.trim() ? parse(call.body) : {};
    if (body === undefined) return errors(400, `Unexpected character ('${call.body.trim()[0]}'): expected a valid JSON value`);
    if (path === '/myself' && method === 'GET') return json(200, { ...this.userJson('me', version), locale: 'en_US', groups: { size: 1, items: [] }, applicationRoles: { size: 1, items: [] }, expand: 'groups,applicationRoles' });
    if (path === '/search' && (method === 'GET' || method === 'POST')) {
      if (this.mode === 'cloud') return errors(410, 'The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046');
      return this.searchByOffset(method === 'POST' ? body : fromQuery(query));
    }
    if (path === '/search/jql' && (method === 'GET' || method === 'POST') && this.mode === 'cloud') return this.searchByToken(method === 'POST' ? body : fromQuery(query), version);
    const parts = /^\/issue\/([^/]+)(?:\/(comment|transitions)(?:\/([^/]+))?)?$/.exec(path);
    if (!parts) return this.notFound(call.path);
    const [, ref, sub, commentId] = parts;
    const issue = this.issues.find((candidate) => candidate.key.toLowerCase() === decodeURIComponent(ref!).toLowerCase() || candidate.id === ref);
    if (!issue) return errors(404, 'Issue does not exist or you do not have permission to see it.');
    if (sub === undefined && method === 'GET') return json(200, this.issueJson(issue, version, fieldSet(query.getAll('fields').join(',') || '*all')));
    if (sub === 'transitions' && !commentId && method === 'GET') {
      const transitions = workflow[issue.status]!.map(([id, name, to]) => ({ id, name, to: this.statusJson(to), hasScreen: false, isGlobal: false, isInitial: false, isAvailable: true, isConditional: false, isLooped: false }));
      return json(200, { expand: 'transitions', transitions });
    }
    if (sub === 'transitions' && !commentId && method === 'POST') {
      const id = body.transition?.id;
      const step = workflow[issue.status]!.find(([candidate]) => candidate === String(id));
      if (!step) return errors(400, id === undefined ? "Missing 'transition' identifier" : `Transition id '${id}' is not valid for this issue.`);
      this.update(issue, { status: step[2] });
      return json(204);
    }
    if (sub === 'comment' && !commentId && method === 'GET') {
      const all = this.commentList.filter((comment) => comment.issueId === issue.id);
      if (query.get('orderBy') === '-created') all.reverse();
      const startAt = Number(query.get('startAt') ?? 0);
      const maxResults = Math.min(Number(query.get('maxResults') ?? 5000), 5000);
      return json(200, { startAt, maxResults, total: all.length, comments: all.slice(startAt, startAt + maxResults).map((comment) => this.commentJson(comment, issue, version)) });
    }
    const comment = commentId && this.commentList.find((candidate) => candidate.id === commentId && candidate.issueId === issue.id);
    if (sub !== 'comment' || (commentId ? method !== 'PUT' : method !== 'POST')) return this.notFound(call.path);
    if (commentId && !comment) return errors(404, `Can not find a comment for the id: ${commentId}.`);
    const stored = this.commentBody(body.body, version);
    if ('status' in stored) return stored;
    if (!comment) return json(201, this.commentJson(this.storeComment(issue, stored.body, 'me'), issue, version));
    comment.body = stored.body;
    comment.updated = issue.updated = this.tick();
    return json(200, this.commentJson(comment, issue, version));
  }

  private signedIn(authorization: string): boolean {
    const [scheme, credential] = authorization.split(/\s+/, 2);
    if (this.mode === 'cloud') return /^basic$/i.test(scheme ?? '') && credential === Buffer.from(`${this.email}:${this.token}`).toString('base64');
    return /^bearer$/i.test(scheme ?? '') && credential === this.token;
  }

  private serverInfo(): Json {
    const cloud = this.mode === 'cloud';
    const numbers = cloud ? [1001, 0, 0] : [9, 12, 15];
    return {
      baseUrl: this.url, version: cloud ? '1001.0.0-SNAPSHOT' : numbers.join('.'), versionNumbers: numbers, deploymentType: this.deploymentType, buildNumber: cloud ? 100289 : 9120015,
      buildDate: cloud ? '2026-11-20T00:00:00.000+0000' : '2024-11-05T00:00:00.000+0000', serverTime: jiraTime(Date.now()), scmInfo: '5ad45e8bd8bc4a0c1bb09ad8b5a3e0e1c0c2e6b3', serverTitle: 'Jira',
      ...(cloud ? { displayUrl: this.url, serverTimeZone: 'Etc/UTC', defaultLocale: { locale: 'en_US' } } : { databaseBuildNumber: 9120015 }),
    };
  }

  // ─── Search ───

  /** Cloud's enhanced search: an opaque token, no `total`, and no `nextPageToken` at all on the last page. */
  private searchByToken(params: Json, version: number): FakeJiraAnswer {
    const fields = params.fields === undefined ? null : fieldSet(params.fields);
    const found = this.search(String(params.jql ?? ''), true);
    if (!Array.isArray(found)) return found;
    const decoded = /^o(\d+)$/.exec(Buffer.from(String(params.nextPageToken ?? 'o0'), params.nextPageToken ? 'base64url' : 'utf8').toString());
    if (!decoded) return errors(400, 'The provided next page token is invalid or expired.');
    const offset = Number(decoded[1]);
    const cap = fields && fields.size > 0 ? 100 : 5000;
    const maxResults = Math.max(1, Math.min(Number(params.maxResults ?? 50) || 50, cap));
    const page = found.slice(offset, offset + maxResults);
    const more = offset + maxResults < found.length;
    return json(200, {
      issues: page.map((issue) => (fields === null ? { id: issue.id } : this.issueJson(issue, version, fields))),
      ...(more ? { nextPageToken: Buffer.from(`o${offset + maxResults}`).toString('base64url') } : {}), isLast: !more,
    });
  }

  /** Data Center's search: startAt/maxResults/total; fields default to *navigable. */
  private searchByOffset(params: Json): FakeJiraAnswer {
    const found = this.search(String(params.jql ?? ''), false);
    if (!Array.isArray(found)) return found;
    const startAt = Math.max(0, Number(params.startAt ?? 0) || 0);
    const maxResults = Math.max(0, Math.min(Number(params.maxResults ?? 50), this.searchLimit));
    const fields = fieldSet(params.fields ?? '*navigable');
    return json(200, { expand: 'schema,names', startAt, maxResults, total: found.length, issues: found.slice(startAt, startAt + maxResults).map((issue) => this.issueJson(issue, 2, fields)) });
  }

  private search(jql: string, bounded: boolean): FakeJiraIssue[] | FakeJiraAnswer {
    try {
      const { where, order } = parseJql(jql);
      if (!where && bounded) return errors(400, 'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.');
      const test = where ? this.compile(where) : () => true;
      const sorts = (order.length ? order : [{ field: 'created', desc: true }]).map(({ field, desc }) => {
        const name = fieldNames[field.toLowerCase()];
        if (!name) throw new JqlFailure(`Field '${field}' does not exist or you do not have permission to view it.`);
        const key = sortKeys[name];
        if (!key) throw new JqlFailure(`Not able to sort using field '${field}'.`);
        return { key, sign: desc ? -1 : 1 };
      });
      const compare = (a: FakeJiraIssue, b: FakeJiraIssue) => sorts.map(({ key, sign }) => (key(a) === key(b) ? 0 : (key(a) < key(b) ? -1 : 1) * sign)).find(Boolean);
      return this.issues.filter(test).sort((a, b) => compare(a, b) ?? (Number(a.id) - Number(b.id)) * sorts[0]!.sign);
    } catch (failure) {
      if (failure instanceof JqlFailure) return errors(400, failure.message);
      throw failure;
    }
  }

  private compile(node: JqlNode): (issue: FakeJiraIssue) => boolean {
    if ('not' in node) return ((inner) => (issue: FakeJiraIssue) => !inner(issue))(this.compile(node.not));
    if (!('and' in node) && !('or' in node)) return this.clause(node);
    const parts = ('and' in node ? node.and : node.or).map((part) => this.compile(part));
    return 'and' in node ? (issue) => parts.every((part) => part(issue)) : (issue) => parts.some((part) => part(issue));
  }

  /** One clause: the field and operator checked, each value resolved now (so errors come before any issue is read). */
  private clause({ field, op, values }: JqlClause): (issue: FakeJiraIssue) => boolean {
    const name = fieldNames[field.toLowerCase()];
    if (!name) throw new JqlFailure(`Field '${field}' does not exist or you do not have permission to view it.`);
    if (!operators[name]!.includes(op)) throw new JqlFailure(`The operator '${op.toUpperCase()}' is not supported by the '${field}' field.`);
    const missing = (value: JqlValue): never => { throw new JqlFailure(`The value '${value.text}' does not exist for the field '${field}'.`); };
    const unknownFunction = (value: JqlValue) => { if (value.fn) throw new JqlFailure(`Unable to find JQL function '${value.text}()'.`); };
    const emptyValue = (value: JqlValue) => !value.quoted && !value.fn && /^(empty|null)$/i.test(value.text);
    if ((op === 'is' || op === 'is not') && !emptyValue(values[0]!)) throw new JqlFailure(`The operator '${op.toUpperCase()}' only supports the 'EMPTY' or 'NULL' values for the field '${field}'.`);
    if (name === 'updated' || name === 'created') {
      const value = values[0]!;
      if (op === 'is' || op === 'is not') return () => op === 'is not';
      if (!/^now$/i.test(value.text)) unknownFunction(value);
      const at = value.fn ? Date.now() : jqlDate(value.text, field);
      const minute = (time: number) => Math.floor(time / 60_000);
      return (issue) => ((time) => ({ '=': minute(time) === minute(at), '!=': minute(time) !== minute(at), '>': time > at, '>=': time >= at, '<': time < at, '<=': time <= at })[op])(Date.parse(issue[name])) ?? false;
    }
    const ci = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
    const resolve = (value: JqlValue): string => {
      if (name === 'assignee') {
        if (value.fn && /^currentUser$/i.test(value.text)) return 'me';
        unknownFunction(value);
        const user = [this.me, this.other].find((candidate) => (this.mode === 'cloud' ? [candidate.accountId, candidate.emailAddress, candidate.displayName] : [candidate.name, candidate.key, candidate.emailAddress, candidate.displayName]).some((ref) => ci(ref, value.text)));
        return user === this.me ? 'me' : user ? 'other' : missing(value);
      }
      unknownFunction(value);
      if (name === 'labels') return value.text;
      if (name === 'project') return [...this.projects.values()].find((project) => ci(project.key, value.text) || ci(project.name, value.text) || project.id === value.text)?.key ?? missing(value);
      if (name === 'status') return Object.keys(statuses).find((status) => ci(status, value.text) || statuses[status]!.id === value.text) ?? missing(value);
      if (name === 'statusCategory') return Object.values(statuses).map((status) => status.category).find((category) => ci(category.key, value.text) || ci(category.name, value.text) || String(category.id) === value.text)?.key ?? missing(value);
      if (name === 'priority') return priorities.find((priority) => ci(priority, value.text)) ?? missing(value);
      const issue = this.issues.find((candidate) => ci(candidate.key, value.text) || candidate.id === value.text);
      if (!issue) throw new JqlFailure(`An issue with key '${value.text}' does not exist for field '${field}'.`);
      return issue.key;
    };
    const wanted = values.filter((value) => !emptyValue(value)).map(resolve);
    const wantsEmpty = values.some(emptyValue);
    const actual = (issue: FakeJiraIssue): string[] => ({
      project: [issue.project], status: [issue.status], statusCategory: [statuses[issue.status]!.category.key], priority: [issue.priority],
      key: [issue.key], labels: issue.labels, assignee: issue.assignee ? ['me'] : [],
    } as Record<string, string[]>)[name]!;
    // As in Jira, `!=` and NOT IN never match an empty field (labels != x skips unlabelled issues).
    return (issue) => {
      const have = actual(issue);
      const hit = have.some((value) => wanted.includes(value)) || (wantsEmpty && have.length === 0);
      return op === 'is' ? have.length === 0 : op === 'is not' ? have.length > 0 : op === '=' || op === 'in' ? hit : have.length > 0 && !hit;
    };
  }

  // ─── Writes ───

  /** The body as stored, or Jira's 400: Cloud stores ADF (v3 must send ADF, v2 a string), DC a string. */
  private commentBody(given: unknown, version: number): { body: unknown } | FakeJiraAnswer {
    if (given === undefined || given === null || given === '') return json(400, { errorMessages: [], errors: { comment: 'Comment body can not be empty!' } });
    if (version === 3) {
      const valid = typeof given === 'object' && (given as Json).type === 'doc' && (given as Json).version === 1 && Array.isArray((given as Json).content);
      return valid ? { body: given } : json(400, { errorMessages: [], errors: { comment: 'Comment body is not valid!' } });
    }
    if (typeof given !== 'string') return errors(400, 'Can not deserialize instance of java.lang.String out of START_OBJECT token');
    return { body: this.mode === 'cloud' ? adf(given) : given };
  }

  private storeComment(issue: FakeJiraIssue, body: unknown, author: Person): StoredComment {
    issue.updated = this.tick();
    const comment: StoredComment = { id: String(this.nextId.comment++), issueId: issue.id, body, author, created: issue.updated, updated: issue.updated };
    this.commentList.push(comment);
    return comment;
  }

  private changed(issue: FakeJiraIssue, items: Json[]): Json {
    if (items.length) issue.updated = this.tick();
    const changelog = { id: String(this.nextId.changelog++), items };
    this.lastChangelog.set(issue, changelog);
    return changelog;
  }

  /** Strictly increasing times a minute apart, from the current minute on. */
  private tick(): string {
    this.clock += 60_000;
    return jiraTime(this.clock);
  }

  // ─── Representations ───

  private userJson(who: Person, version: number): Json {
    const user = who === 'me' ? this.me : who === 'other' ? this.other : this.stranger;
    const avatarUrls = Object.fromEntries(['48x48', '24x24', '16x16', '32x32'].map((size) => [size, `https://avatar.example.com/${user.name}?s=${size.split('x')[0]}`]));
    if (this.mode === 'datacenter') return { self: `${this.url}/rest/api/2/user?username=${user.name}`, key: user.key, name: user.name, emailAddress: user.emailAddress, avatarUrls, displayName: user.displayName, active: true, deleted: false, timeZone: 'Etc/UTC' };
    return { self: `${this.url}/rest/api/${version}/user?accountId=${encodeURIComponent(user.accountId)}`, accountId: user.accountId, accountType: 'atlassian', emailAddress: user.emailAddress, avatarUrls, displayName: user.displayName, active: true, timeZone: 'Etc/UTC' };
  }

  private statusJson(name: string): Json {
    const { id, category } = statuses[name]!;
    return { self: `${this.url}/rest/api/2/status/${id}`, description: '', iconUrl: `${this.url}/`, name, id, statusCategory: { self: `${this.url}/rest/api/2/statuscategory/${category.id}`, ...category } };
  }

  private issueJson(issue: FakeJiraIssue, version: number, fields: Set<string>): Json {
    const project = this.projects.get(issue.project)!;
    const priorityId = String(priorities.indexOf(issue.priority) + 1 || 3);
    const all: Record<string, () => unknown> = {
      summary: () => issue.summary, labels: () => [...issue.labels], updated: () => issue.updated, created: () => issue.created,
      description: () => (issue.description === null ? null : version === 3 ? (typeof issue.description === 'string' ? adf(issue.description) : issue.description) : plain(issue.description)),
      priority: () => ({ self: `${this.url}/rest/api/2/priority/${priorityId}`, iconUrl: `${this.url}/images/icons/priorities/${issue.priority.toLowerCase()}.svg`, name: issue.priority, id: priorityId }),
      status: () => this.statusJson(issue.status), assignee: () => (issue.assignee ? this.userJson('me', version) : null), reporter: () => this.userJson('other', version),
      project: () => ({ self: `${this.url}/rest/api/2/project/${project.id}`, id: project.id, key: project.key, name: project.name, projectTypeKey: 'software' }),
      issuetype: () => ({ self: `${this.url}/rest/api/2/issuetype/10002`, id: '10002', description: 'A small, distinct piece of work.', name: 'Task', subtask: false, hierarchyLevel: 0 }),
      comment: () => ((comments) => ({ comments, maxResults: comments.length, total: comments.length, startAt: 0 }))(this.commentList.filter((comment) => comment.issueId === issue.id).map((comment) => this.commentJson(comment, issue, version))),
    };
    const shown = Object.fromEntries(knownFields.filter((name) => fields.has(name)).map((name) => [name, all[name]!()]));
    return {
      expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations', id: issue.id,
      self: `${this.url}/rest/api/${version}/issue/${issue.id}`, key: issue.key, ...(Object.keys(shown).length ? { fields: shown } : {}),
    };
  }

  private commentJson(comment: StoredComment, issue: FakeJiraIssue, version: number): Json {
    const author = this.userJson(comment.author, version);
    const body = version === 3 ? comment.body : plain(comment.body);
    return { self: `${this.url}/rest/api/${version}/issue/${issue.id}/comment/${comment.id}`, id: comment.id, author, body, updateAuthor: author, created: comment.created, updated: comment.updated, ...(this.mode === 'cloud' ? { jsdPublic: true } : {}) };
  }
}

function fromQuery(query: URLSearchParams): Json {
  return { ...Object.fromEntries(query), ...(query.has('fields') ? { fields: query.getAll('fields').join(',') } : {}) };
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The fields asked for: a comma list, `*all`, `*navigable`, `-name` to leave one out; unknown names ignored. */
function fieldSet(spec: unknown): Set<string> {
  const parts = (Array.isArray(spec) ? spec.join(',') : String(spec)).split(',').map((item) => item.trim()).filter(Boolean);
  const navigable = knownFields.filter((name) => name !== 'comment');
  const chosen = new Set<string>(parts[0]?.startsWith('-') ? navigable : []);
  for (const part of parts) {
    if (part === '*all' || part === '*navigable') (part === '*all' ? knownFields : navigable).forEach((name) => chosen.add(name));
    else if (part.startsWith('-')) chosen.delete(part.slice(1));
    else if (knownFields.includes(part)) chosen.add(part);
  }
  return chosen;
}

/** Plain text as an ADF document, a paragraph a line. */
function adf(text: string): Json {
  return { type: 'doc', version: 1, content: text.split('\n').map((line) => ({ type: 'paragraph', content: line ? [{ type: 'text', text: line }] : [] })) };
}

/** The plain text of a string or an ADF node (v2 shows ADF as text; Jira itself renders wiki markup). */
function plain(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return '';
  const node = value as Json;
  if (node.type === 'text') return String(node.text ?? '');
  if (node.type === 'hardBreak') return '\n';
  const inline = ['paragraph', 'heading', 'codeBlock'].includes(node.type);
  return (Array.isArray(node.content) ? node.content : []).map(plain).join(inline ? '' : '\n');
}

// ─── JQL ───

class JqlFailure extends Error {}
interface JqlValue { text: string; quoted: boolean; fn: boolean }
interface JqlClause { field: string; op: string; values: JqlValue[] }
type JqlNode = { and: JqlNode[] } | { or: JqlNode[] } | { not: JqlNode } | JqlClause;
interface Token { kind: 'word' | 'string' | 'op' | '(' | ')' | ',' | 'eof'; text: string; at: number }

const fieldNames: Record<string, string> = {
  project: 'project', labels: 'labels', status: 'status', statuscategory: 'statusCategory', assignee: 'assignee', priority: 'priority',
  updated: 'updated', updateddate: 'updated', created: 'created', createddate: 'created', key: 'key', issuekey: 'key', id: 'key',
};
const sets = ['=', '!=', 'in', 'not in'];
const operators: Record<string, string[]> = {
  project: sets, status: sets, statusCategory: sets, priority: sets, key: sets, labels: [...sets, 'is', 'is not'], assignee: [...sets, 'is', 'is not'],
  updated: ['=', '!=', '>', '>=', '<', '<=', 'is', 'is not'], created: ['=', '!=', '>', '>=', '<', '<=', 'is', 'is not'],
};
const sortKeys: Record<string, (issue: FakeJiraIssue) => string | number> = {
  updated: (issue) => Date.parse(issue.updated), created: (issue) => Date.parse(issue.created), key: (issue) => `${issue.project}-${issue.key.split('-')[1]!.padStart(9, '0')}`,
  priority: (issue) => priorities.indexOf(issue.priority), status: (issue) => issue.status, summary: (issue) => issue.summary.toLowerCase(), project: (issue) => issue.project,
};
const keywords = new Set(['and', 'or', 'not', 'in', 'is', 'empty', 'null', 'order', 'by', 'asc', 'desc']);
const operatorList = "The valid operators are '=', '!=', '<', '>', '<=', '>=', '~', '!~', 'IN', 'NOT IN', 'IS' and 'IS NOT'.";

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  for (let index = 0; index < jql.length;) {
    const char = jql[index]!;
    const rest = jql.slice(index);
    let match: RegExpExecArray | null;
    if (/\s/.test(char)) index++;
    else if (char === '"' || char === "'") {
      let end = index + 1;
      let text = '';
      while (end < jql.length && jql[end] !== char) text += jql[end] === '\\' ? jql[++end] ?? '' : jql[end], end++;
      if (end >= jql.length) throw new JqlFailure(`Error in the JQL Query: The quoted string '${text}' has not been completed. (line 1, character ${index + 1})`);
      tokens.push({ kind: 'string', text, at: index + 1 });
      index = end + 1;
    } else if ((match = /^(!=|>=|<=|!~|=|>|<|~)|^[(),]|^[\w.\-/:@+*?&|$#]+/.exec(rest))) {
      const kind = match[1] ? 'op' : /^[(),]$/.test(match[0]) ? (match[0] as '(' | ')' | ',') : 'word';
      tokens.push({ kind, text: match[0], at: index + 1 });
      index += match[0].length;
    } else {
      throw new JqlFailure(`Error in the JQL Query: The character '${char}' is a reserved JQL character. You must enclose it in a string or use the escape '\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}' instead. (line 1, character ${index + 1})`);
    }
  }
  tokens.push({ kind: 'eof', text: '', at: jql.length + 1 });
  return tokens;
}

/** `where` (null when the query has no restriction) and ORDER BY, or a JqlFailure worded as Jira words it. */
function parseJql(jql: string): { where: JqlNode | null; order: { field: string; desc: boolean }[] } {
  const tokens = tokenize(jql);
  let index = 0;
  const peek = () => tokens[index]!;
  const is = (token: Token | undefined, ...names: string[]) => token?.kind === 'word' && names.includes(token.text.toLowerCase());
  const fail = (token: Token, expected: string, extra = ''): never => {
    const tail = extra ? ` ${extra}` : '';
    throw new JqlFailure(token.kind === 'eof' ? `Error in the JQL Query: ${expected} before the end of the query.${tail}` : `Error in the JQL Query: ${expected} but got '${token.text}'.${tail} (line 1, character ${token.at})`);
  };
  const expect = (kind: Token['kind'], text: string) => (peek().kind === kind ? index++ : fail(peek(), `Expecting '${text}'`));
  const fieldName = (): Token => {
    const token = peek();
    if (!(token.kind === 'string' || (token.kind === 'word' && !keywords.has(token.text.toLowerCase())))) fail(token, 'Expecting a field name');
    index++;
    return token;
  };
  const value = (): JqlValue => {
    const token = peek();
    const word = token.kind === 'word' && (!keywords.has(token.text.toLowerCase()) || is(token, 'empty', 'null'));
    if (token.kind !== 'string' && !word) fail(token, 'Expecting either a value, list or function', token.kind === 'word' ? `You must surround '${token.text}' in quotation marks to use it as a value.` : '');
    index++;
    const fn = word && peek().kind === '(';
    if (fn) index++, expect(')', ')');
    return { text: token.text, quoted: token.kind === 'string', fn };
  };
  const clause = (): JqlClause => {
    const field = fieldName().text;
    const token = peek();
    let op: string;
    if (token.kind === 'op') op = token.text, index++;
    else if (is(token, 'in')) op = 'in', index++;
    else if (is(token, 'not') && is(tokens[index + 1], 'in')) op = 'not in', index += 2;
    else if (is(token, 'is')) index++, op = is(peek(), 'not') ? (index++, 'is not') : 'is';
    else return fail(token, 'Expecting operator', operatorList);
    if (op !== 'in' && op !== 'not in') return { field, op, values: [value()] };
    expect('(', '(');
    const values = [value()];
    while (peek().kind === ',') index++, values.push(value());
    expect(')', ')');
    return { field, op, values };
  };
  const unary = (): JqlNode => {
    if (is(peek(), 'not')) return index++, { not: unary() };
    if (peek().kind !== '(') return clause();
    index++;
    return ((inner) => (expect(')', ')'), inner))(or());
  };
  const chain = (names: string[], next: () => JqlNode, make: (parts: JqlNode[]) => JqlNode) => (): JqlNode => {
    const parts = [next()];
    while (is(peek(), ...names)) index++, parts.push(next());
    return parts.length === 1 ? parts[0]! : make(parts);
  };
  const or: () => JqlNode = chain(['or', '||'], chain(['and', '&&'], unary, (and) => ({ and })), (parts) => ({ or: parts }));
  const where = peek().kind === 'eof' || is(peek(), 'order') ? null : or();
  const order: { field: string; desc: boolean }[] = [];
  if (is(peek(), 'order')) {
    if (!is(tokens[++index], 'by')) fail(peek(), "Expecting 'by'");
    index++;
    do {
      order.push({ field: fieldName().text, desc: is(peek(), 'desc') });
      if (is(peek(), 'asc', 'desc')) index++;
    } while (peek().kind === ',' && index++);
  }
  if (peek().kind !== 'eof') fail(peek(), where && !order.length ? "Expecting either 'OR' or 'AND'" : "Expecting ','");
  return { where, order };
}

/** A JQL date: a period like "-15m", "-1d 2h", "4w" (from now), or "yyyy/MM/dd HH:mm", "yyyy-MM-dd HH:mm", "yyyy/MM/dd", "yyyy-MM-dd" in UTC. */
function jqlDate(text: string, field: string): number {
  const period = /^([-+]?)\s*((?:\d+\s*[wdhm]\s*)+)$/i.exec(text.trim());
  if (period) {
    const units: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000 };
    const span = [...period[2]!.matchAll(/(\d+)\s*([wdhm])/gi)].reduce((sum, [, count, unit]) => sum + Number(count) * units[unit!.toLowerCase()]!, 0);
    return Date.now() + (period[1] === '-' ? -span : span);
  }
  const absolute = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\s+(\d{1,2}):(\d{2}))?$/.exec(text.trim());
  if (absolute) {
    const [, year, month, day, hour = '0', minute = '0'] = absolute;
    const at = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute));
    if (new Date(at).getUTCDate() === Number(day) && Number(hour) < 24) return at;
  }
  throw new JqlFailure(`Date value '${text}' for field '${field}' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.`);
}
