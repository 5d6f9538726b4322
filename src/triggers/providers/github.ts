// GitHub issues (PROVIDERS §3): REST at <baseUrl> (default https://api.github.com; GitHub
// Enterprise Server is https://<host>/api/v3) with a token as `Bearer`, `Accept:
// application/vnd.github+json` and the API version. Webhooks are signed with `X-Hub-Signature-256`.
//
// Filters: repo (`owner/name`, required), labels (any of), assignee (`me`, a login or `none`), and
// the issue open. The issues API returns pull requests too: they are never issues here. A full
// poll lists the open issues; an incremental poll lists every issue (open or closed) updated since
// the cursor, so it also sees issues close or leave the filter, and asks with the last ETag: an
// idle repository answers 304, which GitHub does not count against the rate limit.

import type { Connection, ConnectionAccount, Issue, TriggerConfig } from '../../core/api';
import { ValidationError, quote } from '../../core/errors';
import { isRecord } from '../../core/validate';
import { httpRequest, redactUrl, retryAfterMs } from '../../net/http';
import { ProviderError, hasAnyOf, issueVerdict, jsonValue, readHeader, same, text, webhookJson, type ObservedIssue, type TrackerProvider, type WebhookVerdict, type WriteBackTarget, type IncomingWebhook } from '../provider';
import { commentMarkdown, isRunComment } from '../comment-text';
import { pageSize, pages } from '../paging';
import { ownAccount } from '../own-account';
import { verifyGithubSignature } from '../secrets';

const defaultGithubApi = 'https://api.github.com';
const apiVersion = '2022-11-28';
/** An incremental poll asks for changes since the newest seen less this (clock skew). */
const pollMarginMs = 120_000;
const repoPattern = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const loginPattern = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;
/** Issue actions that say something about whether the issue is in the filter now. */
const issueActions = ['opened', 'reopened', 'edited', 'labeled', 'unlabeled', 'assigned', 'unassigned', 'closed'];

type Json = Record<string, unknown>;

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

export function apiRoot(connection: Connection): string {
  return (connection.baseUrl ?? defaultGithubApi).replace(/\/+$/, '');
}

/**
 * One REST exchange. Answers 2xx, 304, 404 and the statuses of `options.answered` (a 422, whose
 * body says what GitHub refused) as they are (the caller knows what they mean); throws
 * ProviderError in GitHub's words for the rest, with the time a rate limit lifts.
 */
export async function rest(connection: Connection, method: string, path: string, options: { body?: unknown; etag?: string; signal?: AbortSignal; answered?: readonly number[] } = {}): Promise<Answer> {
  const root = apiRoot(connection);
  const url = path.startsWith('http') ? path : `${root}${path}`;
  const answer = await httpRequest({
    url, method, service: 'GitHub', secrets: [connection.token],
    headers: {
      Authorization: `Bearer ${connection.token}`, Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': apiVersion,
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(options.etag ? { 'If-None-Match': options.etag } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const body = jsonValue(answer.text);
  const { status, headers } = answer;
  if ((status >= 200 && status < 300) || status === 304 || status === 404 || options.answered?.includes(status)) return { status, headers, body };
  const said = isRecord(body) && text(body.message) ? text(body.message)! : `HTTP ${status}`;
  const now = Date.now();
  if ((status === 403 || status === 429) && (headers.get('x-ratelimit-remaining') === '0' || headers.has('retry-after'))) {
    const reset = Number(headers.get('x-ratelimit-reset')) * 1000;
    const retryAt = headers.has('retry-after') ? now + (retryAfterMs(headers, now) ?? 60_000) : reset > now ? reset : now + 60_000;
    throw new ProviderError(`GitHub's rate limit was reached: ${said}`, true, retryAt);
  }
  if (status === 401) throw new ProviderError(`GitHub refused the token: ${said}`);
  if (status === 403) {
    const needed = headers.get('x-accepted-github-permissions') ?? headers.get('x-accepted-oauth-scopes');
    const has = headers.get('x-oauth-scopes');
    throw new ProviderError(`GitHub refused: ${said}${needed ? ` (this needs ${needed}${has !== null ? `; the token has ${has || 'no scopes'}` : ''})` : ''}`);
  }
  if (status >= 500) throw new ProviderError(`GitHub answered HTTP ${status}: try again later`, true);
  if (!isRecord(body)) throw new ProviderError(`${redactUrl(url)} answered HTTP ${status} without GitHub's JSON: is the API address right?`);
  throw new ProviderError(`GitHub: ${said}`);
}

/**
 * The `rel="next"` URL of a `Link` header (undefined on the last page). The token goes with the
 * request, so a next page on another origin than the API's is refused with a ProviderError, never
 * followed, and never taken for the last page (a full poll would think it saw every issue).
 */
function nextPage(headers: Headers, connection: Connection): string | undefined {
  const next = /<([^>]+)>\s*;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1];
  if (next === undefined) return undefined;
  const api = new URL(apiRoot(connection)).origin;
  let origin: string;
  try {
    origin = new URL(next, api).origin;
  } catch {
    throw new ProviderError(`GitHub's next page link is not a URL (${quote(next.slice(0, 200))})`);
  }
  if (origin !== api) throw new ProviderError(`GitHub's next page is on another site (${origin}), not the API's (${api}): Factory does not send the token there, so the listing stopped. Is the API address right?`);
  return new URL(next, api).href;
}

/**
 * The answers of a listing, page by page from `first` (a path, or a URL) along its `Link` header
 * (`nextPage`, which keeps the token on the API's origin), through `pages` (paging.ts). `etag` goes
 * with the first request only; `commentsOn` names the issue when the listing is a search for a
 * run's comment (it words the errors).
 */
function listPages(connection: Connection, first: string, options: { etag?: string; signal?: AbortSignal; commentsOn?: string } = {}): AsyncGenerator<Answer, void, undefined> {
  const { etag, signal, commentsOn } = options;
  return pages<Answer>({
    service: 'GitHub', ...(commentsOn !== undefined ? { commentsOn } : {}),
    first: first.startsWith('/') ? `${apiRoot(connection)}${first}` : first,
    read: (url, index) => rest(connection, 'GET', url, { ...(index === 0 && etag ? { etag } : {}), ...(signal ? { signal } : {}) }),
    next: (answer) => nextPage(answer.headers, connection),
  });
}

/**
 * A listing read whole (`listPages`): the first page's status and ETag, and the items of every
 * page. A first page answered 304 (nothing changed since `etag`) or 404 has no items; a later 404
 * ends the listing where it is; an answer that is no list throws ProviderError.
 */
export async function readAll(connection: Connection, first: string, options: { etag?: string; signal?: AbortSignal } = {}): Promise<{ status: number; etag?: string; items: Json[] }> {
  let listed: { status: number; etag?: string; items: Json[] } | undefined;
  for await (const answer of listPages(connection, first, options)) {
    const etag = answer.headers.get('etag');
    listed ??= { status: answer.status, ...(etag ? { etag } : {}), items: [] };
    if (answer.status === 304 || answer.status === 404) break;
    if (!Array.isArray(answer.body)) throw new ProviderError(`GitHub answered ${new URL(first, apiRoot(connection)).pathname} without a list`);
    listed.items.push(...answer.body.filter(isRecord));
  }
  return listed!; // the first page is always asked for
}

/** The trigger's repository, `owner/name`. */
export function repoOf(trigger: TriggerConfig): string {
  return trigger.filter?.repo ?? '';
}

function names(list: unknown, field: string): string[] {
  return Array.isArray(list) ? list.map((item) => (typeof item === 'string' ? item : isRecord(item) ? text(item[field]) : undefined)).filter((name): name is string => Boolean(name)) : [];
}

/** Why a GitHub issue is outside the trigger's filter, or undefined when it matches. */
function filter(trigger: TriggerConfig, raw: Json, connection: Connection): string | undefined {
  const wanted = trigger.filter ?? {};
  if (raw.state !== 'open') return 'ignored: closed';
  if (wanted.labels?.length && !hasAnyOf(names(raw.labels, 'name'), wanted.labels)) return `ignored: has none of the labels ${wanted.labels.join(', ')}`;
  const assignees = names(raw.assignees, 'login');
  const assignee = wanted.assignee === 'me' ? connection.account?.name : wanted.assignee;
  if (wanted.assignee === 'none' && assignees.length > 0) return 'ignored: assigned to someone';
  if (assignee && wanted.assignee !== 'none' && !assignees.some((login) => same(login, assignee))) return `ignored: not assigned to ${assignee}`;
  return undefined;
}

/** The issue as runs see it; undefined for a pull request or something that is not an issue. */
function observe(trigger: TriggerConfig, raw: unknown, connection: Connection): ObservedIssue | undefined {
  if (!isRecord(raw) || 'pull_request' in raw || typeof raw.number !== 'number' || !text(raw.title)?.trim()) return undefined;
  const issue: Issue = { title: text(raw.title)!.trim().slice(0, 1000), key: `${repoOf(trigger)}#${raw.number}`, source: 'github', labels: names(raw.labels, 'name'), raw };
  if (text(raw.body)) issue.description = text(raw.body)!.slice(0, 1_000_000);
  if (text(raw.html_url)) issue.url = text(raw.html_url)!;
  const outside = filter(trigger, raw, connection);
  return { issue, key: issue.key!, ...(outside ? { outside } : {}), ...(text(raw.updated_at) ? { updatedAt: text(raw.updated_at)! } : {}) };
}

/** The path of the trigger's issue: /repos/<owner>/<name>/issues/<number>. */
function issuePath(target: WriteBackTarget): string {
  return `/repos/${repoOf(target.trigger)}/issues/${target.issue.raw?.number}`;
}

/** The numeric id of the token's user (GET /user), asked once per token: only its comments are adopted. */
export function ownUserId(connection: Connection): Promise<string> {
  return ownAccount(connection, async () => {
    const answer = await rest(connection, 'GET', '/user');
    const id = isRecord(answer.body) ? answer.body.id : undefined;
    if (answer.status !== 200 || (typeof id !== 'number' && typeof id !== 'string')) throw new ProviderError(`GitHub did not say whose token this is (GET /user answered HTTP ${answer.status})`);
    return String(id);
  });
}

/**
 * The run's comment among the issue's: written by the token's user and beginning with the run's
 * first line. `Link` pages without end, or back to one already read, end the search (`pages`).
 */
async function findComment(target: WriteBackTarget, runId: string): Promise<string | undefined> {
  const own = await ownUserId(target.connection);
  for await (const answer of listPages(target.connection, `${issuePath(target)}/comments?per_page=${pageSize}`, { commentsOn: target.issue.key ?? 'the issue' })) {
    if (answer.status === 404 || !Array.isArray(answer.body)) return undefined;
    const found = answer.body.find((comment) => isRecord(comment) && isRecord(comment.user) && String(comment.user.id) === own && isRunComment(text(comment.body) ?? '', runId));
    if (found) return String((found as Json).id);
  }
  return undefined;
}

/**
 * A verified GitHub delivery's event name and JSON object (a form-encoded hook's `payload` field
 * too), or the verdict when it is not one to look into: not GitHub's, not JSON, a `ping` (200), an
 * event of another repository than `repository` (ignored).
 */
export function readGithubWebhook(webhook: IncomingWebhook, repository: string): { event: string; payload: Json } | { verdict: WebhookVerdict } {
  const event = readHeader(webhook, 'x-github-event');
  if (!event) return { verdict: { kind: 'invalid', reason: 'not a GitHub webhook: the X-GitHub-Event header is missing' } };
  const raw = webhook.body.toString('utf8');
  // A hook set to application/x-www-form-urlencoded sends the JSON as the `payload` field.
  const parsed = webhookJson(raw.startsWith('payload=') ? new URLSearchParams(raw).get('payload') ?? '' : raw);
  if ('verdict' in parsed) return parsed;
  const { payload } = parsed;
  if (!isRecord(payload)) return { verdict: { kind: 'invalid', reason: 'not a GitHub webhook: the body is not an object' } };
  if (event === 'ping') return { verdict: { kind: 'answer', status: 200, body: { ok: true }, reason: `ping: GitHub set up the webhook (hook ${String(payload.hook_id ?? '?')})` } };
  const from = isRecord(payload.repository) ? text(payload.repository.full_name) : undefined;
  if (from && !same(from, repository)) return { verdict: { kind: 'ignored', reason: `ignored: an event of another repository (${from})` } };
  return { event, payload };
}

export const githubProvider: TrackerProvider = {
  name: 'GitHub',

  async verifyConnection(connection): Promise<ConnectionAccount> {
    const answer = await rest(connection, 'GET', '/user');
    const user = isRecord(answer.body) ? answer.body : {};
    if (answer.status !== 200 || !text(user.login)) throw new ProviderError(`${redactUrl(`${apiRoot(connection)}/user`)} answered HTTP ${answer.status} without GitHub's user: is the API address right?`);
    return { id: String(user.id ?? user.login), name: text(user.login)!, ...(text(user.email) ? { email: text(user.email)! } : {}) };
  },

  async checkTrigger(trigger, connection) {
    const wanted = trigger.filter ?? {};
    const issues: { field: string; message: string }[] = [];
    if (!wanted.repo || !repoPattern.test(wanted.repo)) issues.push({ field: 'filter.repo', message: `The repository filter must be a repository as owner/name, not ${quote(wanted.repo ?? '')}` });
    if (wanted.assignee && !['me', 'none'].includes(wanted.assignee) && !loginPattern.test(wanted.assignee)) issues.push({ field: 'filter.assignee', message: `The assignee filter must be me, none or a GitHub login, not ${quote(wanted.assignee)}` });
    if (issues.length === 0 && (await rest(connection, 'GET', `/repos/${wanted.repo}`)).status === 404) {
      issues.push({ field: 'filter.repo', message: `GitHub has no repository ${quote(wanted.repo)} that this token can read` });
    }
    if (issues.length > 0) throw new ValidationError(issues, 'Trigger not saved:');
  },

  async *poll(trigger, connection, cursor, signal) {
    const stored = cursor ? (jsonValue(cursor) as { since?: unknown; etag?: unknown } | undefined) : undefined;
    // A cursor that does not read (a damaged file) makes this poll a full one.
    const previous = typeof stored?.since === 'string' && Number.isFinite(Date.parse(stored.since)) ? { since: stored.since, etag: text(stored.etag) } : undefined;
    const query = previous
      ? `state=all&sort=updated&direction=desc&per_page=${pageSize}&since=${new Date(Date.parse(previous.since) - pollMarginMs).toISOString()}`
      : `state=open&sort=updated&direction=desc&per_page=${pageSize}`;
    let newest = previous?.since;
    // Only the first page's ETag is kept: a change to any issue moves it to the first page (sorted by update).
    let etag: string | undefined;
    for await (const answer of listPages(connection, `/repos/${repoOf(trigger)}/issues?${query}`, { ...(previous?.etag ? { etag: previous.etag } : {}), ...(signal ? { signal } : {}) })) {
      if (answer.status === 304) return cursor; // nothing changed, and it cost no rate limit
      if (answer.status === 404) throw new ProviderError(`GitHub has no repository ${quote(repoOf(trigger))} that this token can read (any more)`);
      if (!Array.isArray(answer.body)) throw new ProviderError('GitHub answered the issue list without a list');
      etag ??= answer.headers.get('etag') ?? '';
      const page = answer.body.map((item) => observe(trigger, item, connection)).filter((observed): observed is ObservedIssue => observed !== undefined);
      for (const observed of page) if (observed.updatedAt && (!newest || observed.updatedAt > newest)) newest = observed.updatedAt;
      yield page;
    }
    return newest ? JSON.stringify({ since: newest, ...(etag && newest === previous?.since ? { etag } : {}) }) : undefined;
  },

  async fetchIssue(trigger, connection, key) {
    const number = /#(\d+)$/.exec(key)?.[1];
    if (!number) return undefined;
    const answer = await rest(connection, 'GET', `/repos/${repoOf(trigger)}/issues/${number}`);
    return answer.status === 404 ? undefined : observe(trigger, answer.body, connection);
  },

  filter,

  verifyWebhook(webhook, trigger) {
    if (!trigger.webhookSecret) return true;
    return verifyGithubSignature(webhook.body, trigger.webhookSecret, readHeader(webhook, 'x-hub-signature-256'));
  },

  parseWebhook(webhook, trigger, connection): WebhookVerdict {
    const read = readGithubWebhook(webhook, repoOf(trigger));
    if ('verdict' in read) return read.verdict;
    const { event, payload } = read;
    if (event === 'pull_request') return { kind: 'ignored', reason: 'ignored: a pull request' };
    if (event !== 'issues' && event !== 'issue_comment') return { kind: 'ignored', reason: `ignored: ${event} event` };
    if (!isRecord(payload.issue) || typeof payload.action !== 'string') return { kind: 'invalid', reason: `not a GitHub ${event} event: it needs action and issue` };
    if ('pull_request' in payload.issue) return { kind: 'ignored', reason: 'ignored: a comment on a pull request' };
    if (event === 'issues' && !issueActions.includes(payload.action)) return { kind: 'ignored', reason: `ignored: issue ${payload.action}` };
    if (!connection) return { kind: 'ignored', reason: 'ignored: the trigger has no account' };
    const observed = observe(trigger, payload.issue, connection);
    if (!observed) return { kind: 'invalid', reason: 'not a GitHub issue: it needs a number and a title' };
    return issueVerdict(observed, readHeader(webhook, 'x-github-delivery'));
  },

  async upsertComment(target, comment, commentId) {
    const { connection } = target;
    const repo = repoOf(target.trigger);
    const content = commentMarkdown(comment);
    const known = commentId ?? (await findComment(target, comment.runId));
    if (known) {
      const updated = await rest(connection, 'PATCH', `/repos/${repo}/issues/comments/${known}`, { body: { body: content } });
      if (updated.status !== 404) return known;
      if (commentId) return this.upsertComment(target, comment); // deleted by someone: find or make it again
    }
    const created = await rest(connection, 'POST', `${issuePath(target)}/comments`, { body: { body: content } });
    if (created.status === 404 || !isRecord(created.body) || created.body.id === undefined) throw new ProviderError(`GitHub did not create the comment on ${target.issue.key} (HTTP ${created.status})`);
    return String(created.body.id);
  },

  async mark(target, name, previous) {
    const added = await rest(target.connection, 'POST', `${issuePath(target)}/labels`, { body: { labels: [name] } });
    if (added.status === 404) throw new ProviderError(`GitHub has no issue ${target.issue.key} to label`);
    if (previous && !same(previous, name)) await rest(target.connection, 'DELETE', `${issuePath(target)}/labels/${encodeURIComponent(previous)}`); // 404: already gone
  },
};
