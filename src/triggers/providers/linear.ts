// Linear (PROVIDERS §1): GraphQL at <baseUrl>/graphql (default https://api.linear.app), personal
// API keys (`lin_api_…`) sent bare in `Authorization`, OAuth tokens as `Bearer`. Webhooks are
// signed with `Linear-Signature` (the spec's `Tracker-Signature`): hex HMAC-SHA256 of the raw body,
// and carry `webhookTimestamp` in the signed body, checked to be within a minute (replay); a signed
// delivery without it is refused (the unsigned `Linear-Timestamp` header is never used).
//
// Filters: team (key), states (state types or names; none given: every state but completed,
// canceled and duplicate), labels (any of), assignee (`me`, `none` or an email). A full poll asks
// Linear for the matching issues in creation order (stable while issues change); an incremental
// poll asks for every issue of the team changed since the cursor and filters here, so it also
// sees the issues that left the filter.

import type { Connection, ConnectionAccount, Issue, TriggerConfig } from '../../core/api';
import { ValidationError, quote } from '../../core/errors';
import { isRecord } from '../../core/validate';
import { httpRequest, redactUrl, retryAfterMs } from '../../net/http';
import { ProviderError, hasAnyOf, issueVerdict, jsonValue, readHeader, same, text, webhookJson, type ObservedIssue, type TrackerProvider, type WebhookVerdict } from '../provider';
import { commentMarkdown, isRunComment } from '../comment-text';
import { pageSize, pages } from '../paging';
import { verifyHmacSha256Hex } from '../secrets';

export const defaultLinearApi = 'https://api.linear.app';
const stateTypes = ['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled', 'duplicate'];
const closedStateTypes = ['completed', 'canceled', 'duplicate'];
/** An incremental poll asks for changes since the cursor less this (clock skew, late indexing). */
const pollMarginMs = 120_000;
/** The official SDK's replay window for `webhookTimestamp`. */
const webhookToleranceMs = 60_000;
/** Without a usable reset header, a rate limit pauses polling this long. */
const defaultRateLimitPauseMs = 60_000;

const issueFields = `id identifier title description url priority priorityLabel updatedAt
  state { id name type } team { id key name } assignee { id name email } labels(first: 50) { nodes { id name } }`;
const issuesQuery = `query FactoryIssues($filter: IssueFilter, $after: String, $first: Int, $orderBy: PaginationOrderBy) {
  issues(filter: $filter, after: $after, first: $first, orderBy: $orderBy) { nodes { ${issueFields} } pageInfo { hasNextPage endCursor } } }`;

type Json = Record<string, unknown>;

/**
 * One GraphQL exchange; throws ProviderError in Linear's own words (rate limits with their reset
 * time). The answer comes scrubbed of the key (httpRequest), so Linear's words never hold it.
 */
export async function graphql(connection: Connection, query: string, variables: Json = {}, signal?: AbortSignal): Promise<Json> {
  const url = endpoint(connection);
  const token = connection.token;
  const answer = await httpRequest({
    url, method: 'POST', service: 'Linear', secrets: [token],
    headers: { 'Content-Type': 'application/json', Authorization: token.startsWith('lin_api_') ? token : `Bearer ${token.replace(/^Bearer\s+/i, '')}` },
    body: JSON.stringify({ query, variables }),
    ...(signal ? { signal } : {}),
  });
  const body = jsonValue(answer.text);
  const errors = isRecord(body) && Array.isArray(body.errors) ? body.errors.filter(isRecord) : [];
  const extensions = isRecord(errors[0]?.extensions) ? errors[0].extensions : {};
  const said = String(extensions.userPresentableMessage ?? errors[0]?.message ?? '');
  const code = `${extensions.code ?? ''} ${extensions.type ?? ''}`.toLowerCase();
  if (answer.status === 429 || code.includes('ratelimited')) {
    const now = Date.now();
    const resets = ['x-ratelimit-requests-reset', 'x-ratelimit-complexity-reset'].map((name) => Number(answer.headers.get(name))).filter((at) => at > now);
    const retryAt = Math.max(now + (retryAfterMs(answer.headers, now) ?? 0), ...resets);
    throw new ProviderError(`Linear's rate limit was reached${said ? ` (${said})` : ''}`, true, retryAt > now ? retryAt : now + defaultRateLimitPauseMs);
  }
  if (answer.status === 401 || code.includes('authentication')) throw new LinearAuthenticationError(`Linear refused the API key: ${said || 'authentication required'}`);
  if (answer.status !== 200 && answer.status !== 400 && answer.status < 500) throw notLinear(url, answer.status);
  if (errors.length > 0) throw new ProviderError(`Linear: ${said || 'an unnamed error'}`, code.includes('internal'));
  if (answer.status >= 500) throw new ProviderError(`Linear answered HTTP ${answer.status}: try again later`, true);
  if (answer.status !== 200 || !isRecord(body) || !isRecord(body.data)) throw notLinear(url, answer.status);
  return body.data;
}

/** Linear refused the token (401, or an authentication error): an app installation refreshes its token once and tries again (linear-oauth.ts). */
export class LinearAuthenticationError extends ProviderError {
  override name = 'LinearAuthenticationError';
}

function notLinear(url: string, status: number): ProviderError {
  return new ProviderError(`${redactUrl(url)} answered HTTP ${status} without Linear's GraphQL answer: is the API address right?`);
}

function endpoint(connection: Connection): string {
  const base = (connection.baseUrl ?? defaultLinearApi).replace(/\/+$/, '');
  return base.endsWith('/graphql') ? base : `${base}/graphql`;
}

// ─── Reading Linear's issues (GraphQL nodes and webhook `data` alike) ───

/** Label names: GraphQL gives `labels.nodes`, webhooks a plain array. */
function labelNames(raw: Json): string[] {
  const labels = isRecord(raw.labels) ? raw.labels.nodes : raw.labels;
  return Array.isArray(labels) ? labels.map((label) => (isRecord(label) ? text(label.name) : undefined)).filter((name): name is string => Boolean(name)) : [];
}

/** Why a Linear issue is outside the trigger's filter, or undefined when it matches. */
function filter(trigger: TriggerConfig, raw: Json, connection: Connection): string | undefined {
  const wanted = trigger.filter ?? {};
  const team = isRecord(raw.team) ? text(raw.team.key) : undefined;
  if (wanted.team && !same(team, wanted.team)) return `ignored: not in team ${wanted.team}`;
  if (raw.trashed === true || (typeof raw.archivedAt === 'string' && raw.archivedAt)) return 'ignored: archived or deleted';
  const state = isRecord(raw.state) ? raw.state : {};
  const stateName = `${text(state.name) ?? 'unknown'} (${text(state.type) ?? 'unknown type'})`;
  if (wanted.states?.length) {
    if (!wanted.states.some((name) => same(text(state.type), name) || same(text(state.name), name))) return `ignored: in state ${stateName}, not ${wanted.states.join(', ')}`;
  } else if (closedStateTypes.includes(text(state.type) ?? '')) return `ignored: in state ${stateName}`;
  if (wanted.labels?.length) {
    const labels = labelNames(raw);
    if (!hasAnyOf(labels, wanted.labels)) return `ignored: has none of the labels ${wanted.labels.join(', ')}`;
  }
  const assignee = isRecord(raw.assignee) ? raw.assignee : undefined;
  const assigneeId = text(assignee?.id) ?? text(raw.assigneeId);
  if (wanted.assignee === 'me' && (!assigneeId || assigneeId !== connection.account?.id)) return `ignored: not assigned to ${connection.account?.name ?? 'me'}`;
  if (wanted.assignee === 'none' && assigneeId) return 'ignored: assigned to someone';
  if (wanted.assignee?.includes('@') && !same(text(assignee?.email), wanted.assignee)) return `ignored: not assigned to ${wanted.assignee}`;
  return undefined;
}

/** The issue as runs see it, or undefined when `raw` is not a Linear issue. */
function observe(trigger: TriggerConfig, raw: unknown, connection: Connection): ObservedIssue | undefined {
  if (!isRecord(raw) || !text(raw.identifier) || !text(raw.title)?.trim()) return undefined;
  const issue: Issue = { title: text(raw.title)!.trim().slice(0, 1000), key: text(raw.identifier)!, source: 'linear', labels: labelNames(raw), raw };
  const description = text(raw.description);
  if (description) issue.description = description.slice(0, 1_000_000);
  if (text(raw.url)) issue.url = text(raw.url)!;
  if (text(raw.priorityLabel)) issue.priority = text(raw.priorityLabel)!;
  const outside = filter(trigger, raw, connection);
  return { issue, key: issue.key!, ...(outside ? { outside } : {}), ...(text(raw.updatedAt) ? { updatedAt: text(raw.updatedAt)! } : {}) };
}

/** Linear's IssueFilter for the trigger: everything for a full poll, the team and the time for an incremental one. */
function issueFilter(trigger: TriggerConfig, since?: string): Json {
  const wanted = trigger.filter ?? {};
  const all: Json[] = [];
  if (wanted.team) all.push({ team: { key: { eqIgnoreCase: wanted.team } } });
  if (since) return { and: [...all, { updatedAt: { gte: since } }] };
  const states = wanted.states ?? [];
  const types = states.filter((state) => stateTypes.includes(state.toLowerCase())).map((state) => state.toLowerCase());
  const names = states.filter((state) => !stateTypes.includes(state.toLowerCase()));
  if (states.length === 0) all.push({ state: { type: { nin: closedStateTypes } } });
  else all.push({ state: { or: [...(types.length ? [{ type: { in: types } }] : []), ...names.map((name) => ({ name: { eqIgnoreCase: name } }))] } });
  if (wanted.labels?.length) all.push({ labels: { some: { or: wanted.labels.map((label) => ({ name: { eqIgnoreCase: label } })) } } });
  if (wanted.assignee === 'me') all.push({ assignee: { isMe: { eq: true } } });
  else if (wanted.assignee === 'none') all.push({ assignee: { null: true } });
  else if (wanted.assignee) all.push({ assignee: { email: { eqIgnoreCase: wanted.assignee } } });
  return { and: all };
}

function nodes(data: Json, path: string[]): Json[] {
  let value: unknown = data;
  for (const name of path) value = isRecord(value) ? value[name] : undefined;
  return isRecord(value) && Array.isArray(value.nodes) ? value.nodes.filter(isRecord) : [];
}

/**
 * Why a signed Linear delivery is refused for its age, or undefined when it is fresh: only the signed
 * body's `webhookTimestamp` counts (a header is not signed, so a replay could carry a fresh one).
 */
export function signedAgeProblem(payload: Json, receivedAt: number): string | undefined {
  const stamp = typeof payload.webhookTimestamp === 'number' || (typeof payload.webhookTimestamp === 'string' && /^\d+$/.test(payload.webhookTimestamp)) ? Number(payload.webhookTimestamp) : NaN;
  if (!Number.isFinite(stamp)) return 'refused: the signed body has no webhookTimestamp, so its age cannot be checked (a replay is refused the same way)';
  if (Math.abs(receivedAt - stamp) > webhookToleranceMs) return `stale timestamp: ${Math.round((receivedAt - stamp) / 1000)} s from now`;
  return undefined;
}

/** The issue's team id: GraphQL gives `team.id`, webhooks `teamId`. */
function teamIdOf(issue: Issue): string | undefined {
  const raw = issue.raw ?? {};
  return (isRecord(raw.team) ? text(raw.team.id) : undefined) ?? text(raw.teamId);
}

export const linearProvider: TrackerProvider = {
  name: 'Linear',

  async verifyConnection(connection): Promise<ConnectionAccount> {
    const data = await graphql(connection, 'query FactoryViewer { viewer { id name email } }');
    const viewer = isRecord(data.viewer) ? data.viewer : {};
    if (!text(viewer.id)) throw new ProviderError('Linear answered without the account (viewer) of this key');
    return { id: text(viewer.id)!, name: text(viewer.name) ?? text(viewer.email) ?? text(viewer.id)!, ...(text(viewer.email) ? { email: text(viewer.email)! } : {}) };
  },

  async checkTrigger(trigger, connection) {
    const wanted = trigger.filter ?? {};
    const issues: { field: string; message: string }[] = [];
    if (wanted.assignee && !['me', 'none'].includes(wanted.assignee) && !/^[^\s@]+@[^\s@]+$/.test(wanted.assignee)) {
      issues.push({ field: 'filter.assignee', message: `The assignee filter must be me, none or an email address, not ${quote(wanted.assignee)}` });
    }
    if (wanted.team) {
      const data = await graphql(connection, `query FactoryTeam($key: String!) {
        teams(first: 250) { nodes { key } }
        workflowStates(first: 250, filter: { team: { key: { eqIgnoreCase: $key } } }) { nodes { name type } } }`, { key: wanted.team });
      const keys = nodes(data, ['teams']).map((team) => String(team.key));
      const stateNames = nodes(data, ['workflowStates']).map((state) => String(state.name));
      if (!keys.some((key) => same(key, wanted.team!))) {
        issues.push({ field: 'filter.team', message: `Linear has no team with the key ${quote(wanted.team)} (this account sees ${keys.join(', ') || 'no teams'})` });
      } else {
        const named = [...(wanted.states ?? []).filter((state) => !stateTypes.includes(state.toLowerCase())).map((name) => ['filter.states', name]),
          ...Object.values(trigger.writeBack?.states ?? {}).map((name) => ['writeBack.states', name])];
        for (const [field, name] of named) {
          if (!stateNames.some((state) => same(state, name!))) issues.push({ field: field!, message: `The team ${wanted.team} has no state ${quote(name)} (its states: ${stateNames.join(', ')})` });
        }
      }
    }
    if (issues.length > 0) throw new ValidationError(issues, 'Trigger not saved:');
  },

  async *poll(trigger, connection, cursor, signal) {
    const since = cursor ? new Date(Date.parse(cursor) - pollMarginMs).toISOString() : undefined;
    const variables: Json = { filter: issueFilter(trigger, since), first: pageSize, orderBy: since ? 'updatedAt' : 'createdAt' };
    let newest = cursor;
    const listing = pages({
      service: 'Linear', first: '',
      read: async (after) => {
        const data = await graphql(connection, issuesQuery, { ...variables, ...(after ? { after } : {}) }, signal);
        const connectionOfIssues = isRecord(data.issues) ? data.issues : undefined;
        if (!connectionOfIssues || !Array.isArray(connectionOfIssues.nodes)) throw new ProviderError('Linear answered the issue list without its nodes');
        return connectionOfIssues as { nodes: unknown[] } & Json;
      },
      next: (connectionOfIssues) => {
        const pageInfo = isRecord(connectionOfIssues.pageInfo) ? connectionOfIssues.pageInfo : {};
        return pageInfo.hasNextPage === true ? text(pageInfo.endCursor) || undefined : undefined;
      },
    });
    for await (const { nodes } of listing) {
      const page: ObservedIssue[] = [];
      for (const node of nodes) {
        const observed = observe(trigger, node, connection);
        if (!observed) throw new ProviderError(`Linear answered an issue without an identifier or title: ${quote(node)}`);
        page.push(observed);
        if (observed.updatedAt && (!newest || Date.parse(observed.updatedAt) > Date.parse(newest))) newest = observed.updatedAt;
      }
      yield page;
    }
    return newest;
  },

  async fetchIssue(trigger, connection, key) {
    const data = await graphql(connection, `query FactoryIssue($id: String!) { issue(id: $id) { ${issueFields} } }`, { id: key }).catch((error: unknown) => {
      if (error instanceof ProviderError && /not found/i.test(error.message)) return { issue: null };
      throw error;
    });
    return data.issue ? observe(trigger, data.issue, connection) : undefined;
  },

  filter,

  verifyWebhook(webhook, trigger) {
    if (!trigger.webhookSecret) return true;
    return verifyHmacSha256Hex(webhook.body, trigger.webhookSecret, readHeader(webhook, 'linear-signature') ?? readHeader(webhook, 'tracker-signature'));
  },

  parseWebhook(webhook, trigger, connection): WebhookVerdict {
    const parsed = webhookJson(webhook.body.toString('utf8'));
    if ('verdict' in parsed) return parsed.verdict;
    const { payload } = parsed;
    if (!isRecord(payload) || typeof payload.type !== 'string' || typeof payload.action !== 'string' || !isRecord(payload.data)) {
      return { kind: 'invalid', reason: 'not a Linear webhook: it needs type, action and data' };
    }
    const stale = trigger.webhookSecret ? signedAgeProblem(payload, webhook.receivedAt) : undefined;
    if (stale) return { kind: 'refused', reason: stale };
    if (payload.type !== 'Issue') return { kind: 'ignored', reason: `ignored: ${payload.type} event` };
    if (payload.action !== 'create' && payload.action !== 'update') return { kind: 'ignored', reason: `ignored: issue ${payload.action}` };
    if (!connection) return { kind: 'ignored', reason: 'ignored: the trigger has no account' };
    const observed = observe(trigger, payload.data, connection);
    if (!observed) return { kind: 'invalid', reason: 'not a Linear issue: data needs an identifier and a title' };
    return issueVerdict(observed, readHeader(webhook, 'linear-delivery'));
  },

  async upsertComment(target, comment, commentId) {
    const { connection, issue } = target;
    const issueId = text(issue.raw?.id) ?? issue.key!;
    const body = commentMarkdown(comment);
    if (commentId) {
      const updated = await graphql(connection, `mutation FactoryCommentUpdate($id: String!, $input: CommentUpdateInput!) {
        commentUpdate(id: $id, input: $input) { success comment { id } } }`, { id: commentId, input: { body } }).catch((error: unknown) => {
        if (error instanceof ProviderError && /not found|does not exist/i.test(error.message)) return undefined; // deleted by someone: find or make it again
        throw error;
      });
      if (updated) return commentId;
    }
    // Comments that mention the run id, asked for with the key's own user: only one of its comments
    // beginning with the run's first line is the run's.
    const found = await graphql(connection, `query FactoryComment($id: String!, $marker: String!) {
      viewer { id }
      issue(id: $id) { comments(first: 50, filter: { body: { contains: $marker } }) { nodes { id body user { id } } } } }`, { id: issueId, marker: comment.runId });
    const viewer = isRecord(found.viewer) ? text(found.viewer.id) : undefined;
    const existing = text(nodes(found, ['issue', 'comments']).find((node) => viewer !== undefined && isRecord(node.user) && node.user.id === viewer && isRunComment(text(node.body) ?? '', comment.runId))?.id);
    if (existing) return existing === commentId ? existing : this.upsertComment(target, comment, existing);
    const created = await graphql(connection, `mutation FactoryCommentCreate($input: CommentCreateInput!) {
      commentCreate(input: $input) { success comment { id } } }`, { input: { issueId, body } });
    const made = isRecord(created.commentCreate) && isRecord(created.commentCreate.comment) ? text(created.commentCreate.comment.id) : undefined;
    if (!made) throw new ProviderError('Linear did not create the comment (no comment id in its answer)', true);
    return made;
  },

  async mark(target, name) {
    const { connection, issue } = target;
    const teamId = teamIdOf(issue);
    if (!teamId) throw new ProviderError(`the issue ${issue.key} carries no team, so its state ${quote(name)} cannot be found`);
    const data = await graphql(connection, `query FactoryState($team: ID!, $name: String!) {
      workflowStates(first: 5, filter: { team: { id: { eq: $team } }, name: { eqIgnoreCase: $name } }) { nodes { id name } } }`, { team: teamId, name });
    const state = text(nodes(data, ['workflowStates'])[0]?.id);
    if (!state) throw new ProviderError(`Linear's team of ${issue.key} has no state ${quote(name)}`);
    const moved = await graphql(connection, `mutation FactoryMove($id: String!, $input: IssueUpdateInput!) {
      issueUpdate(id: $id, input: $input) { success } }`, { id: text(issue.raw?.id) ?? issue.key!, input: { stateId: state } });
    if (!isRecord(moved.issueUpdate) || moved.issueUpdate.success !== true) throw new ProviderError(`Linear did not move ${issue.key} to ${quote(name)}`, true);
  },
};
