// Jira (PROVIDERS §2), Cloud and Data Center. The account's `baseUrl` is the site. Jira Cloud:
// `Authorization: Basic base64(email:api token)`, REST v3 (descriptions and comments in ADF).
// Data Center / Server: a personal access token as `Bearer` (or a username in `email` with a
// password, as Basic), REST v2 (strings in wiki markup): Data Center has no v3. Which one answers
// is read from /rest/api/2/serverInfo when the account is verified, and kept in `account.server`.
//
// Filters: `query` (JQL, run at Jira and checked there when saved) and optional labels (any of,
// checked here, on polls and webhooks). Webhooks are not checked against the query (the spec),
// except for the projects it plainly names (`project = X`, `project in (A, B)` joined by AND), so
// a site-wide Jira webhook starts no runs for other projects. Jira's query runs at Jira, so an
// incremental poll (the query and `updated` within the minutes since the last poll) cannot see an
// issue leave it: a full poll every hour does.

import type { Connection, ConnectionAccount, Issue, TriggerConfig } from '../../core/api';
import { ValidationError, quote } from '../../core/errors';
import { jqlProjects } from '../../core/jql-projects';
import { isRecord } from '../../core/validate';
import { httpRequest, redactUrl, retryAfterMs } from '../../net/http';
import { ProviderError, hasAnyOf, issueVerdict, jsonValue, readHeader, same, text, webhookJson, type ObservedIssue, type TrackerProvider, type WebhookVerdict, type WriteBackTarget } from '../provider';
import { commentAdf, commentWikiMarkup, isRunComment } from '../comment-text';
import { pageSize, pages } from '../paging';
import { ownAccount } from '../own-account';
import { constantTimeEqual, presentedToken, verifyGithubSignature } from '../secrets';

/** An incremental poll asks for the minutes since the last poll began, plus these (clock skew, indexing). */
const pollMarginMinutes = 2;
const fields = 'summary,description,labels,priority,status,assignee,updated,created,project,issuetype';
const handledEvents = ['jira:issue_created', 'jira:issue_updated'];

type Json = Record<string, unknown>;

function isCloud(connection: Connection): boolean {
  return connection.account?.server === undefined ? Boolean(connection.email) : connection.account.server === 'Jira Cloud';
}

export function api(connection: Connection): string {
  return `${site(connection)}/rest/api/${isCloud(connection) ? 3 : 2}`;
}

function site(connection: Connection): string {
  return (connection.baseUrl ?? '').replace(/\/+$/, '');
}

/**
 * One REST exchange; answers 2xx and 404 as they are, throws ProviderError in Jira's words for the
 * rest. The answer comes scrubbed of the credentials (httpRequest), so Jira's words never hold them.
 */
export async function rest(connection: Connection, method: string, url: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
  const authorization = connection.email ? `Basic ${Buffer.from(`${connection.email}:${connection.token}`).toString('base64')}` : `Bearer ${connection.token}`;
  const answer = await httpRequest({
    url, method, service: 'Jira', secrets: [connection.token],
    headers: { Authorization: authorization, Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });
  const parsed = jsonValue(answer.text);
  const { status, headers } = answer;
  if ((status >= 200 && status < 300) || status === 404) return { status, body: parsed };
  // Jira's errors: {"errorMessages": [...], "errors": {field: message}}; 401s may be HTML or text.
  const messages = isRecord(parsed) ? [...(Array.isArray(parsed.errorMessages) ? parsed.errorMessages : []), ...Object.values(isRecord(parsed.errors) ? parsed.errors : {})].filter((item) => typeof item === 'string') : [];
  const said = messages.join(' ') || answer.text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${status}`;
  if (status === 429) {
    const now = Date.now();
    const reset = Date.parse(headers.get('x-ratelimit-reset') ?? '');
    throw new ProviderError(`Jira's rate limit was reached: ${said}`, true, now + (retryAfterMs(headers, now) ?? (reset > now ? reset - now : 60_000)));
  }
  if (status === 401) throw new ProviderError(`Jira refused the credentials (HTTP 401): ${said}`);
  if (status === 403) throw new ProviderError(`Jira refused (HTTP 403): ${said}`);
  if (status >= 500) throw new ProviderError(`Jira answered HTTP ${status}: try again later`, true);
  if (messages.length === 0) throw new ProviderError(`${redactUrl(url)} answered HTTP ${status} without Jira's JSON: is the site address right?`);
  throw new ProviderError(`Jira: ${said}`);
}

// ─── Atlassian Document Format ───

/** Readable plain text of an ADF document: paragraphs, headings, lists, code blocks, links as text. */
export function adfToText(node: unknown): string {
  if (!isRecord(node)) return '';
  const children = Array.isArray(node.content) ? node.content : [];
  const inner = (separator = '') => children.map(adfToText).join(separator);
  switch (node.type) {
    case 'text': {
      const link = Array.isArray(node.marks) ? node.marks.find((mark) => isRecord(mark) && mark.type === 'link') : undefined;
      const href = isRecord(link) && isRecord(link.attrs) ? text(link.attrs.href) : undefined;
      return `${text(node.text) ?? ''}${href && href !== node.text ? ` (${href})` : ''}`;
    }
    case 'hardBreak':
      return '\n';
    case 'mention':
    case 'emoji':
    case 'date':
    case 'status':
      return isRecord(node.attrs) ? String(node.attrs.text ?? node.attrs.shortName ?? node.attrs.timestamp ?? '') : '';
    case 'inlineCard':
    case 'blockCard':
      return isRecord(node.attrs) ? String(node.attrs.url ?? '') : '';
    case 'rule':
      return '---';
    case 'codeBlock':
      return `\`\`\`\n${inner()}\n\`\`\``;
    case 'blockquote':
      return inner('\n\n').split('\n').map((line) => `> ${line}`).join('\n');
    case 'bulletList':
    case 'orderedList':
      return children.map((item, index) => `${node.type === 'bulletList' ? '-' : `${index + 1}.`} ${adfToText(item).replace(/\n/g, '\n  ')}`).join('\n');
    case 'tableRow':
      return inner(' | ');
    case 'table':
      return inner('\n');
    case 'paragraph':
    case 'heading':
    case 'tableCell':
    case 'tableHeader':
    case 'listItem':
      return node.type === 'listItem' ? inner('\n') : inner();
    default:
      return inner('\n\n');
  }
}

// ─── Issues ───

function labelsOf(raw: Json): string[] {
  const labels = isRecord(raw.fields) ? raw.fields.labels : undefined;
  return Array.isArray(labels) ? labels.filter((label): label is string => typeof label === 'string') : [];
}

/**
 * Why a Jira issue is outside the trigger's filter as Factory can check it, or undefined when it
 * matches: the projects the query plainly names (jqlProjects), and the labels. The rest of the
 * query is Jira's: polls ask Jira with it, webhook events are not checked against it.
 */
function filter(trigger: TriggerConfig, raw: Json): string | undefined {
  const projects = jqlProjects(trigger.filter?.query ?? '');
  const project = isRecord(raw.fields) && isRecord(raw.fields.project) ? raw.fields.project : {};
  const projectKey = text(project.key) ?? text(raw.key)?.replace(/-\d+$/, '');
  const names = [projectKey, text(project.name), text(project.id) ?? (typeof project.id === 'number' ? String(project.id) : undefined)];
  if (projects && !projects.some((wanted) => names.some((name) => same(name, wanted)))) return `ignored: in project ${projectKey ?? 'unknown'}, not ${projects.join(', ')} as the query says`;
  const wanted = trigger.filter?.labels ?? [];
  return wanted.length && !hasAnyOf(labelsOf(raw), wanted) ? `ignored: has none of the labels ${wanted.join(', ')}` : undefined;
}

function observe(trigger: TriggerConfig, raw: unknown, connection: Connection): ObservedIssue | undefined {
  const issueFields = isRecord(raw) && isRecord(raw.fields) ? raw.fields : undefined;
  if (!isRecord(raw) || !issueFields || !text(raw.key) || !text(issueFields.summary)?.trim()) return undefined;
  const key = text(raw.key)!;
  const issue: Issue = { title: text(issueFields.summary)!.trim().slice(0, 1000), key, url: `${site(connection)}/browse/${key}`, labels: labelsOf(raw), source: 'jira', raw };
  const description = typeof issueFields.description === 'string' ? issueFields.description : adfToText(issueFields.description);
  if (description.trim()) issue.description = description.slice(0, 1_000_000);
  if (isRecord(issueFields.priority) && text(issueFields.priority.name)) issue.priority = text(issueFields.priority.name)!;
  const outside = filter(trigger, raw);
  return { issue, key, ...(outside ? { outside } : {}), ...(text(issueFields.updated) ? { updatedAt: text(issueFields.updated)! } : {}) };
}

/** The user's JQL without its ORDER BY (Factory orders the search itself). */
function withoutOrder(query: string): string {
  return query.replace(/\border\s+by\b(?=(?:[^"]*"[^"]*")*[^"]*$)[\s\S]*$/i, '').trim();
}

/**
 * Data Center's `startAt` after a page of `returned` items out of `total`: after the items returned
 * (a server may cap `maxResults` below what was asked); undefined after an empty or the last page.
 */
function nextStartAt(startAt: string, returned: number, total: unknown): string | undefined {
  const next = Number(startAt) + returned;
  return returned === 0 || next >= Number(total ?? 0) ? undefined : String(next);
}

/** The issues of a JQL search, page by page (`pages`, paging.ts). */
async function* search(connection: Connection, jql: string, signal?: AbortSignal): AsyncGenerator<unknown[]> {
  const cloud = isCloud(connection);
  const read = async (cursor: string): Promise<{ issues: unknown[] } & Json> => {
    // Cloud's enhanced search pages by token (none on the first page), Data Center's by offset.
    const query = new URLSearchParams({ jql, fields, maxResults: String(pageSize), ...(cloud ? (cursor ? { nextPageToken: cursor } : {}) : { startAt: cursor }) });
    const answer = await rest(connection, 'GET', `${api(connection)}/${cloud ? 'search/jql' : 'search'}?${query}`, undefined, signal);
    const body = isRecord(answer.body) ? answer.body : {};
    if (!Array.isArray(body.issues)) throw new ProviderError(`Jira answered the search without issues (HTTP ${answer.status})`);
    return body as { issues: unknown[] } & Json;
  };
  // Cloud: `nextPageToken` is absent (not null) on the last page (JRACLOUD-92184), and `isLast` ends the search even beside one.
  const next = (body: { issues: unknown[] } & Json, cursor: string) => (cloud ? (body.isLast === true ? undefined : text(body.nextPageToken) || undefined) : nextStartAt(cursor, body.issues.length, body.total));
  for await (const body of pages({ service: 'Jira', first: cloud ? '' : '0', read, next })) yield body.issues;
}

function issueUrl(target: WriteBackTarget): string {
  return `${api(target.connection)}/issue/${encodeURIComponent(target.issue.key ?? '')}`;
}

function commentText(connection: Connection, body: unknown): string {
  return isCloud(connection) ? adfToText(body) : text(body) ?? '';
}

/** Who the token belongs to (GET /myself, once per token): Cloud's accountId, Data Center's name and key. */
export function ownUser(connection: Connection): Promise<{ accountId?: string; name?: string; key?: string }> {
  return ownAccount(connection, async () => {
    const answer = await rest(connection, 'GET', `${api(connection)}/myself`);
    const me = isRecord(answer.body) ? answer.body : {};
    const user = { ...(text(me.accountId) ? { accountId: text(me.accountId)! } : {}), ...(text(me.name) ? { name: text(me.name)! } : {}), ...(text(me.key) ? { key: text(me.key)! } : {}) };
    if (answer.status !== 200 || Object.keys(user).length === 0) throw new ProviderError(`Jira did not say whose token this is (/myself answered HTTP ${answer.status})`);
    return user;
  });
}

/** True when the comment's author is the token's user (by accountId on Cloud, by key or name on Data Center). */
function byOwnUser(comment: Json, own: { accountId?: string; name?: string; key?: string }): boolean {
  const author = isRecord(comment.author) ? comment.author : {};
  return (['accountId', 'key', 'name'] as const).some((field) => own[field] !== undefined && text(author[field]) === own[field]);
}

/**
 * The run's comment, newest first: written by the token's user and beginning with the run's first
 * line. A `total` never reached ends the search after `maxPagesPerPoll` pages (`pages`, paging.ts).
 */
async function findComment(target: WriteBackTarget, runId: string): Promise<string | undefined> {
  const own = await ownUser(target.connection);
  const listing = pages({
    service: 'Jira', commentsOn: target.issue.key ?? 'the issue', first: '0',
    read: async (startAt) => {
      const answer = await rest(target.connection, 'GET', `${issueUrl(target)}/comment?startAt=${startAt}&maxResults=${pageSize}&orderBy=-created`);
      const body = isRecord(answer.body) ? answer.body : {};
      return { comments: Array.isArray(body.comments) ? body.comments.filter(isRecord) : [], total: body.total };
    },
    next: (page, startAt) => nextStartAt(startAt, page.comments.length, page.total),
  });
  for await (const { comments } of listing) {
    const found = comments.find((comment) => byOwnUser(comment, own) && isRunComment(commentText(target.connection, comment.body), runId));
    if (found) return text(found.id);
  }
  return undefined;
}

export const jiraProvider: TrackerProvider = {
  name: 'Jira',
  fullPollEveryMs: 3600_000,

  async verifyConnection(connection): Promise<ConnectionAccount> {
    if (!connection.baseUrl) throw new ValidationError([{ field: 'baseUrl', message: 'The site address is empty: enter the Jira site, such as https://your-site.atlassian.net' }], 'Account not saved:');
    const info = await rest(connection, 'GET', `${site(connection)}/rest/api/2/serverInfo`).catch(() => ({ status: 0, body: undefined }));
    const deployment = isRecord(info.body) ? text(info.body.deploymentType) : undefined;
    const server = deployment === 'Cloud' || (!deployment && connection.email) ? 'Jira Cloud' : `Jira ${deployment === 'Server' ? 'Server' : 'Data Center'}${isRecord(info.body) && text(info.body.version) ? ` ${text(info.body.version)}` : ''}`;
    if (server === 'Jira Cloud' && !connection.email) throw new ValidationError([{ field: 'email', message: 'Jira Cloud signs in with the email of the account and an API token: enter the email' }], 'Account not saved:');
    const checked = { ...connection, account: { id: '', name: '', server } };
    const answer = await rest(checked, 'GET', `${api(checked)}/myself`);
    const me = isRecord(answer.body) ? answer.body : {};
    const id = text(me.accountId) ?? text(me.name) ?? text(me.key);
    if (answer.status !== 200 || !id) throw new ProviderError(`${redactUrl(site(connection))} answered HTTP ${answer.status} without the Jira account: is the site address right?`);
    return { id, name: text(me.displayName) ?? id, ...(text(me.emailAddress) ? { email: text(me.emailAddress)! } : {}), server };
  },

  async checkTrigger(trigger, connection) {
    const query = trigger.filter?.query?.trim();
    if (!query) throw new ValidationError([{ field: 'filter.query', message: 'The JQL query is empty: enter one, such as project = ABC AND labels = agent AND statusCategory != Done' }], 'Trigger not saved:');
    try {
      for await (const _page of search(connection, `${withoutOrder(query)} ORDER BY created DESC`)) break;
    } catch (error) {
      if (error instanceof ProviderError && /^Jira: /.test(error.message)) throw new ValidationError([{ field: 'filter.query', message: error.message }], 'Trigger not saved:');
      throw error;
    }
  },

  async *poll(trigger, connection, cursor, signal) {
    const startedAt = Date.now();
    const query = withoutOrder(trigger.filter?.query ?? '');
    const at = cursor ? Number((jsonValue(cursor) as { at?: unknown } | undefined)?.at) : NaN;
    const since = Number.isFinite(at) ? at : undefined;
    const minutes = since === undefined ? undefined : Math.ceil((startedAt - since) / 60_000) + pollMarginMinutes;
    const jql = minutes === undefined ? `${query} ORDER BY created DESC` : `(${query}) AND updated >= "-${minutes}m" ORDER BY updated DESC`;
    for await (const issues of search(connection, jql, signal)) {
      yield issues.map((raw) => observe(trigger, raw, connection)).filter((observed): observed is ObservedIssue => observed !== undefined);
    }
    return JSON.stringify({ at: startedAt });
  },

  async fetchIssue(trigger, connection, key) {
    const answer = await rest(connection, 'GET', `${api(connection)}/issue/${encodeURIComponent(key)}?fields=${fields}`);
    return answer.status === 404 ? undefined : observe(trigger, answer.body, connection);
  },

  filter,

  verifyWebhook(webhook, trigger) {
    const secret = trigger.webhookSecret;
    if (!secret) return true;
    const token = presentedToken(webhook);
    // Admin webhooks with a secret sign the body: `X-Hub-Signature: sha256=…` (not `-256`).
    return (token !== undefined && constantTimeEqual(token, secret)) || verifyGithubSignature(webhook.body, secret, readHeader(webhook, 'x-hub-signature'));
  },

  parseWebhook(webhook, trigger, connection): WebhookVerdict {
    const parsed = webhookJson(webhook.body.toString('utf8'));
    if ('verdict' in parsed) return parsed.verdict;
    const { payload } = parsed;
    if (!isRecord(payload) || typeof payload.webhookEvent !== 'string') return { kind: 'invalid', reason: 'not a Jira webhook: it needs webhookEvent' };
    if (!handledEvents.includes(payload.webhookEvent)) return { kind: 'ignored', reason: `ignored: ${payload.webhookEvent}` };
    if (!connection) return { kind: 'ignored', reason: 'ignored: the trigger has no account' };
    const issue = isRecord(payload.issue) ? { ...payload.issue } : undefined;
    // Labels may come only in the changelog, as one space-joined string: the set after the change.
    const change = isRecord(payload.changelog) && Array.isArray(payload.changelog.items) ? payload.changelog.items.find((item) => isRecord(item) && item.field === 'labels') : undefined;
    if (issue && isRecord(issue.fields) && !Array.isArray(issue.fields.labels) && isRecord(change)) issue.fields = { ...issue.fields, labels: (text(change.toString) ?? '').split(' ').filter(Boolean) };
    const observed = observe(trigger, issue, connection);
    if (!observed) return { kind: 'invalid', reason: 'not a Jira issue event: the issue needs a key and a summary' };
    if (observed.outside && isRecord(change)) {
      const before = (text(change.fromString) ?? '').split(' ').filter(Boolean);
      const removed = before.filter((label) => !(observed.issue.labels ?? []).some((now) => same(now, label)) && (trigger.filter?.labels ?? []).some((wanted) => same(wanted, label)));
      if (removed.length) observed.outside = `ignored: the label ${removed.join(', ')} was removed`;
    }
    return issueVerdict(observed, readHeader(webhook, 'x-atlassian-webhook-identifier'));
  },

  async upsertComment(target, comment, commentId) {
    const content = isCloud(target.connection) ? commentAdf(comment) : commentWikiMarkup(comment);
    const known = commentId ?? (await findComment(target, comment.runId));
    if (known) {
      const updated = await rest(target.connection, 'PUT', `${issueUrl(target)}/comment/${encodeURIComponent(known)}`, { body: content });
      if (updated.status !== 404) return known;
      if (commentId) return this.upsertComment(target, comment); // deleted by someone: find or make it again
    }
    const created = await rest(target.connection, 'POST', `${issueUrl(target)}/comment`, { body: content });
    const id = isRecord(created.body) ? text(created.body.id) : undefined;
    if (created.status === 404 || !id) throw new ProviderError(`Jira did not create the comment on ${target.issue.key} (HTTP ${created.status})`);
    return id;
  },

  async mark(target, name) {
    const answer = await rest(target.connection, 'GET', `${issueUrl(target)}/transitions`);
    const transitions = isRecord(answer.body) && Array.isArray(answer.body.transitions) ? answer.body.transitions.filter(isRecord) : [];
    // A transition is named by its own name, or by the status it leads to (what people see).
    const chosen = transitions.find((transition) => same(text(transition.name), name)) ?? transitions.find((transition) => isRecord(transition.to) && same(text(transition.to.name), name));
    if (!chosen) {
      const current = isRecord(target.issue.raw?.fields) && isRecord(target.issue.raw.fields.status) ? text(target.issue.raw.fields.status.name) : undefined;
      if (current && same(current, name)) return;
      throw new ProviderError(`Jira offers no transition ${quote(name)} for ${target.issue.key} now (it offers ${transitions.map((transition) => text(transition.name)).join(', ') || 'none'})`);
    }
    await rest(target.connection, 'POST', `${issueUrl(target)}/transitions`, { transition: { id: chosen.id } });
  },
};
