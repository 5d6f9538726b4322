// GitHub pull request reviews (PROVIDERS §6): a 'github-review' trigger watches the pull requests
// Factory opened in one repository and answers each review with a follow-up run of its pipeline on
// the pull request's branch. The REST exchange, paging, `/user` and signatures are the GitHub
// issue provider's (github.ts); this file decides which events count.
//
// Events: `pull_request_review` submitted, `pull_request_review_comment` created, `issue_comment`
// created on a pull request and starting with `/factory`, and `pull_request` closed (its state is
// recorded on the runs, nothing starts). Polling is the safety net: the repository's review
// comments and its `/factory` issue comments since the last poll and each open Factory pull
// request's reviews, all with ETags, and the pull requests' states. A review and the comments GitHub sends beside it share one key (the
// review's id), so they start one run (DECISIONS "Triggers").
//
// Counted: pull requests whose head branch is `factory/…` and that a run opened, updated or
// continued. Ignored with a reason: Factory's own account, other pull requests, closed ones,
// approvals without comments, reviewers without write access (asked of GitHub, kept 5 minutes).

import type { Connection, PullRequestRef, Run, RunFollowUp, TriggerConfig } from '../../core/api';
import { quote } from '../../core/errors';
import { isRecord } from '../../core/validate';
import type { RunService } from '../../engine/runs';
import { PageTrail, ProviderError, jsonValue, readHeader, same, text, type ObservedIssue, type TrackerProvider, type WebhookVerdict } from '../provider';
import { verifyGithubSignature } from '../secrets';
import { followUpKey } from '../trigger-state';
import { apiRoot, githubProvider, nextPage, ownUserId, readGithubWebhook, rest } from './github';

type Json = Record<string, unknown>;
type ClosedState = Exclude<NonNullable<PullRequestRef['state']>, 'open'>;

/** What the provider needs of the runs: which pull requests Factory opened, and where their state goes. */
export type PullRequestRuns = Pick<RunService, 'allRuns' | 'getRun' | 'markPullRequest'>;

/** Factory's pull requests come from branches named so (engine/workspace.ts). */
const factoryBranchPrefix = 'factory/';
/** The comment that asks Factory for a follow-up run on a pull request. */
export const followUpCommand = '/factory';
const pageSize = 100;
/** A poll asks for review comments changed since the newest seen less this. */
const pollMarginMs = 120_000;
/** How long a reviewer's permission is trusted before GitHub is asked again. */
export const permissionCacheMs = 5 * 60_000;
/** Roles (GitHub's legacy `permission`) that may start a follow-up run. */
export const writeRoles = ['admin', 'maintain', 'write'];

/** One thing a reviewer did, from a webhook or a poll, before it is checked. */
interface ReviewEvent {
  number: number;
  /** The review answered: a review event's own, or the review a review comment belongs to. */
  reviewId?: number;
  /** A comment on its own: an `/factory` comment, or a review comment outside any review. */
  commentId?: number;
  author?: { login: string; id: string };
  /** The review's state in lower case, when the event says it. */
  state?: string;
  /** The review's body as the event has it (null: none), or the lone comment's text. */
  body?: string | null;
  /** A lone review comment's file and line. */
  place?: string;
  /** The pull request, when the event carries it (else it is read). */
  pullRequest?: Json;
  /** The run's `issue.raw`: the webhook body, or the review or comment a poll found. */
  raw: Json;
}

/** Where a poll is in one of the repository's comment listings. */
interface ListingCursor {
  /** The newest `updated_at` seen (GitHub's clock). */
  since?: string;
  /** The ETag of the listing asked since `since`. */
  etag?: string;
  /** The newest `updated_at` when the first poll noted the listing: comments up to it are never answered, though the margin lists them again. */
  from?: string;
}

interface ReviewCursor extends ListingCursor {
  /** `since` and `etag`: the repository's review comments. This: its issue comments (`/factory`); absent until first noted. */
  issueComments?: ListingCursor;
  /** Per open Factory pull request: the newest review id seen, the ETag of its reviews, and of the pull request itself. */
  pulls: Record<string, { lastReviewId: number; etag?: string; pullEtag?: string }>;
}

function repoOf(trigger: TriggerConfig): string {
  return trigger.filter?.repo ?? '';
}

function userOf(user: unknown): ReviewEvent['author'] {
  return isRecord(user) && text(user.login) && (typeof user.id === 'number' || typeof user.id === 'string') ? { login: text(user.login)!, id: String(user.id) } : undefined;
}

/** `path:line` of a review comment (the original line when the line is outdated). */
function placeOf(comment: Json): string {
  const line = typeof comment.line === 'number' ? comment.line : comment.original_line;
  return `${text(comment.path) ?? 'the pull request'}${typeof line === 'number' ? `:${line}` : ''}`;
}

/** The pull request's number from a review comment's `pull_request_url` or an issue comment's `issue_url` (a poll's comments have no `pull_request`). */
function numberFromUrl(url: string | undefined): number | undefined {
  const number = /\/(?:pulls|issues)\/(\d+)$/.exec(url ?? '')?.[1];
  return number === undefined ? undefined : Number(number);
}

/** 'merged' or 'closed' for a pull request that is no longer open; undefined while it is open. */
function closedState(pull: Json): ClosedState | undefined {
  if (pull.state !== 'closed') return undefined;
  return pull.merged === true || typeof pull.merged_at === 'string' ? 'merged' : 'closed';
}

// ─── What the runs know ───

/** The latest run that opened, updated or continued the pull request, with the step that did; undefined when none did. */
function factoryRunOf(runs: PullRequestRuns, repository: string, number: number): { run: Run; stepIndex?: number } | undefined {
  let found: { run: Run; stepIndex?: number } | undefined;
  for (const run of runs.allRuns()) {
    const stepIndex = run.steps.findIndex((step) => step.pullRequest !== undefined && same(step.pullRequest.repository, repository) && step.pullRequest.number === number);
    if (stepIndex >= 0) found = { run, stepIndex };
    else if (run.followUp && same(run.followUp.repository, repository) && run.followUp.number === number) found = { run };
  }
  return found;
}

/** The numbers of the repository's pull requests Factory opened that no run knows closed. */
function openFactoryPulls(runs: PullRequestRuns, repository: string): Set<number> {
  const open = new Set<number>();
  const closed = new Set<number>();
  for (const run of runs.allRuns()) {
    for (const step of run.steps) {
      const pull = step.pullRequest;
      if (!pull || !same(pull.repository, repository)) continue;
      if (pull.state === 'merged' || pull.state === 'closed') closed.add(pull.number);
      else open.add(pull.number);
    }
  }
  for (const number of closed) open.delete(number);
  return open;
}

/** The git remote the pull request's branch was pushed to: the opening step's, or the earlier follow-up's (default origin). */
async function remoteOf(runs: PullRequestRuns, found: { run: Run; stepIndex?: number }): Promise<string> {
  if (found.stepIndex !== undefined) {
    const step = (await runs.getRun(found.run.id))?.pipeline?.steps[found.stepIndex];
    if (step?.kind === 'pullRequest' && step.remote) return step.remote;
  }
  return found.run.followUp?.remote ?? 'origin';
}

// ─── What GitHub says ───

async function readJson(connection: Connection, path: string): Promise<Json | undefined> {
  const answer = await rest(connection, 'GET', path);
  return answer.status === 200 && isRecord(answer.body) ? answer.body : undefined;
}

/** Every item of a listing from `first` (a path, or the next page's URL) on, page by page (the token stays on the API's origin: `nextPage`). */
async function readAll(connection: Connection, first: string, signal?: AbortSignal): Promise<Json[]> {
  const items: Json[] = [];
  const trail = new PageTrail('GitHub');
  for (let url: string | undefined = first.startsWith('/') ? `${apiRoot(connection)}${first}` : first; url;) {
    trail.follow(url);
    const answer = await rest(connection, 'GET', url, signal ? { signal } : {});
    if (answer.status === 404) return items;
    if (!Array.isArray(answer.body)) throw new ProviderError(`GitHub answered ${new URL(url).pathname} without a list`);
    items.push(...answer.body.filter(isRecord));
    url = nextPage(answer.headers, connection);
  }
  return items;
}

const permissions = new Map<string, { at: number; permission: string }>();

/**
 * The reviewer's permission on the repository (GitHub's legacy role: admin, write, read, none;
 * maintain counts as write), asked once per 5 minutes; 404 means no access.
 */
export async function permissionOf(connection: Connection, repository: string, login: string): Promise<string> {
  const key = [connection.id, apiRoot(connection), repository.toLowerCase(), login.toLowerCase()].join('\n');
  const now = Date.now();
  const cached = permissions.get(key);
  if (cached && now - cached.at < permissionCacheMs) return cached.permission;
  const answer = await rest(connection, 'GET', `/repos/${repository}/collaborators/${encodeURIComponent(login)}/permission`);
  const permission = answer.status === 200 && isRecord(answer.body) ? text(answer.body.permission) ?? 'none' : 'none';
  if (permissions.size >= 1000) for (const [old, entry] of permissions) if (now - entry.at >= permissionCacheMs) permissions.delete(old);
  permissions.set(key, { at: now, permission });
  return permission;
}

/** The review's body, then each of its comments as `path:line` and text. */
function describe(body: string | null | undefined, comments: readonly Json[]): string {
  const parts = body?.trim() ? [body.trim()] : [];
  for (const comment of comments) parts.push(`${placeOf(comment)}\n${text(comment.body) ?? ''}`);
  return parts.join('\n\n').slice(0, 1_000_000);
}

// ─── Deciding ───

/**
 * Checks one event against the rules above and, when it counts, gives the follow-up to admit
 * (dedup and `maxFollowUps` are the admission's). Throws ProviderError when GitHub fails.
 */
async function decide(runs: PullRequestRuns, trigger: TriggerConfig, connection: Connection, event: ReviewEvent): Promise<ObservedIssue | { ignored: string }> {
  const repository = repoOf(trigger);
  const pullName = `#${event.number}`;
  if (!event.author) return { ignored: 'ignored: the event names no author' };
  if (event.author.id === (await ownUserId(connection))) return { ignored: `ignored: written by Factory's own account (${event.author.login})` };
  const found = factoryRunOf(runs, repository, event.number);
  if (!found) return { ignored: `ignored: ${pullName} is not a pull request Factory opened` };
  const pull = event.pullRequest ?? (await readJson(connection, `/repos/${repository}/pulls/${event.number}`));
  if (!pull) return { ignored: `ignored: GitHub has no pull request ${pullName}` };
  const branch = isRecord(pull.head) ? text(pull.head.ref) : undefined;
  if (!branch?.startsWith(factoryBranchPrefix)) return { ignored: `ignored: ${pullName} is not a pull request Factory opened (its branch is ${quote(branch ?? '')})` };
  const closed = closedState(pull);
  if (closed) {
    await runs.markPullRequest(repository, event.number, closed);
    return { ignored: `ignored: ${pullName} is ${closed}` };
  }
  const permission = await permissionOf(connection, repository, event.author.login);
  if (!writeRoles.includes(permission)) return { ignored: `ignored: ${event.author.login} has no write access to ${repository} (${permission})` };
  let description = event.place ? `${event.place}\n${event.body ?? ''}` : event.body ?? '';
  if (event.reviewId !== undefined) {
    let { state, body } = event;
    if (state === undefined) {
      const review = await readJson(connection, `/repos/${repository}/pulls/${event.number}/reviews/${event.reviewId}`);
      if (!review) return { ignored: `ignored: GitHub has no review ${event.reviewId} on ${pullName}` };
      state = text(review.state)?.toLowerCase();
      body = text(review.body) ?? null;
    }
    if (state !== 'changes_requested' && state !== 'commented' && state !== 'approved') return { ignored: `ignored: a ${state ?? 'stateless'} review` };
    const comments = await readAll(connection, `/repos/${repository}/pulls/${event.number}/reviews/${event.reviewId}/comments?per_page=${pageSize}`);
    if (state === 'approved' && comments.length === 0) return { ignored: 'ignored: an approval without comments' };
    description = describe(body, comments);
    if (!description) return { ignored: 'ignored: a review without text' };
  }
  const followUp: RunFollowUp = {
    repository, number: event.number, url: text(pull.html_url) ?? '', branch, remote: await remoteOf(runs, found),
    ...(event.reviewId !== undefined ? { reviewId: event.reviewId } : { commentId: event.commentId! }),
  };
  const labels = Array.isArray(pull.labels) ? pull.labels.map((label) => (isRecord(label) ? text(label.name) : text(label))).filter((name): name is string => Boolean(name)) : [];
  const issue = { title: (text(pull.title)?.trim() || `Pull request ${pullName}`).slice(0, 1000), key: `${repository}#${event.number}`, source: 'github', labels, raw: event.raw, description, ...(followUp.url ? { url: followUp.url } : {}) };
  return { key: followUpKey(followUp), issue, followUp };
}

/** What a comment beginning with `/factory` asks (the text after it); undefined for any other comment. */
function commandOf(comment: Json): string | undefined {
  const body = (text(comment.body) ?? '').trimStart();
  return body.startsWith(followUpCommand) ? body.slice(followUpCommand.length).trim() : undefined;
}

/** The event a webhook body describes, or the verdict when it is not one that counts. */
function parseEvent(name: string, payload: Json): ReviewEvent | WebhookVerdict {
  const action = text(payload.action) ?? '';
  const pull = isRecord(payload.pull_request) ? payload.pull_request : undefined;
  const invalid = (needs: string): WebhookVerdict => ({ kind: 'invalid', reason: `not a GitHub ${name} event: it needs ${needs}` });
  if (name === 'pull_request_review') {
    if (action !== 'submitted') return { kind: 'ignored', reason: `ignored: review ${action}` };
    const review = payload.review;
    if (!isRecord(review) || typeof review.id !== 'number' || typeof pull?.number !== 'number') return invalid('review.id and pull_request.number');
    return { number: pull.number, reviewId: review.id, author: userOf(review.user), state: text(review.state)?.toLowerCase() ?? '', body: text(review.body) ?? null, pullRequest: pull, raw: payload };
  }
  if (name === 'pull_request_review_comment') {
    if (action !== 'created') return { kind: 'ignored', reason: `ignored: review comment ${action}` };
    const comment = payload.comment;
    if (!isRecord(comment) || typeof comment.id !== 'number' || typeof pull?.number !== 'number') return invalid('comment.id and pull_request.number');
    const reviewId = comment.pull_request_review_id;
    const own = typeof reviewId === 'number' ? { reviewId } : { commentId: comment.id, place: placeOf(comment) };
    return { number: pull.number, ...own, author: userOf(comment.user), body: text(comment.body) ?? '', pullRequest: pull, raw: payload };
  }
  if (name === 'issue_comment') {
    if (action !== 'created') return { kind: 'ignored', reason: `ignored: comment ${action}` };
    const { issue, comment } = payload;
    if (!isRecord(issue) || !isRecord(comment) || typeof issue.number !== 'number' || typeof comment.id !== 'number') return invalid('issue.number and comment.id');
    if (!isRecord(issue.pull_request)) return { kind: 'ignored', reason: 'ignored: a comment on an issue, not on a pull request' };
    const asked = commandOf(comment);
    if (asked === undefined) return { kind: 'ignored', reason: `ignored: a comment that does not begin with ${followUpCommand}` };
    return { number: issue.number, commentId: comment.id, author: userOf(comment.user), body: asked, raw: payload };
  }
  return { kind: 'ignored', reason: `ignored: ${name} event` };
}

/** Records a closed pull request's state on the runs that opened or updated it; starts nothing. */
async function recordClosed(runs: PullRequestRuns, repository: string, pull: Json): Promise<{ ignored: string }> {
  const number = pull.number as number;
  const state = closedState(pull) ?? 'closed';
  if (!factoryRunOf(runs, repository, number)) return { ignored: `ignored: #${number} is not a pull request Factory opened` };
  const changed = await runs.markPullRequest(repository, number, state);
  return { ignored: `#${number} ${state}: recorded on ${changed.length === 1 ? 'its run' : `${changed.length} runs`}; nothing to start` };
}

// ─── Polling ───

function readCursor(cursor: string | undefined): ReviewCursor | undefined {
  const stored = cursor ? jsonValue(cursor) : undefined;
  if (!isRecord(stored) || !isRecord(stored.pulls)) return undefined;
  const pulls: ReviewCursor['pulls'] = {};
  for (const [number, entry] of Object.entries(stored.pulls)) {
    if (isRecord(entry) && typeof entry.lastReviewId === 'number') {
      pulls[number] = { lastReviewId: entry.lastReviewId, ...(text(entry.etag) ? { etag: text(entry.etag)! } : {}), ...(text(entry.pullEtag) ? { pullEtag: text(entry.pullEtag)! } : {}) };
    }
  }
  const issueComments = isRecord(stored.issueComments) ? readListingCursor(stored.issueComments) : undefined;
  return { pulls, ...readListingCursor(stored), ...(issueComments ? { issueComments } : {}) };
}

function readListingCursor(stored: Json): ListingCursor {
  const time = (value: unknown) => (text(value) && Number.isFinite(Date.parse(text(value)!)) ? text(value) : undefined);
  const since = time(stored.since);
  const from = time(stored.from);
  return { ...(since ? { since } : {}), ...(since && text(stored.etag) ? { etag: text(stored.etag)! } : {}), ...(from ? { from } : {}) };
}

/**
 * The reviews of the open Factory pull requests that came after the cursor's, and their states.
 * Without a cursor (the first poll) the reviews there are now are only noted: a new trigger does
 * not answer old reviews. A pull request first met later has all its reviews new.
 */
async function pollReviews(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
  const events: ReviewEvent[] = [];
  for (const number of openFactoryPulls(runs, repository)) {
    const known = previous?.pulls[number];
    // An unchanged pull request (304, free) is still open; its JSON is read again only if a review needs it.
    const read = await rest(connection, 'GET', `/repos/${repository}/pulls/${number}`, { ...(known?.pullEtag ? { etag: known.pullEtag } : {}), ...(signal ? { signal } : {}) });
    const pull = read.status === 200 && isRecord(read.body) ? read.body : undefined;
    if (!pull && read.status !== 304) continue;
    const closed = pull && closedState(pull);
    if (closed) {
      await runs.markPullRequest(repository, number, closed);
      continue;
    }
    const pullEtag = (pull ? read.headers.get('etag') : known?.pullEtag) ?? undefined;
    const first = await rest(connection, 'GET', `/repos/${repository}/pulls/${number}/reviews?per_page=${pageSize}`, { ...(known?.etag ? { etag: known.etag } : {}), ...(signal ? { signal } : {}) });
    if (first.status === 304 && known) {
      next.pulls[number] = { ...known, ...(pullEtag ? { pullEtag } : {}) };
      continue;
    }
    const reviews = Array.isArray(first.body) ? first.body.filter(isRecord) : [];
    const more = nextPage(first.headers, connection);
    if (more) reviews.push(...(await readAll(connection, more, signal)));
    const seen = known?.lastReviewId ?? 0;
    let newest = seen;
    for (const review of reviews) {
      if (typeof review.id !== 'number') continue;
      newest = Math.max(newest, review.id);
      if (previous && review.id > seen) events.push({ number, reviewId: review.id, author: userOf(review.user), state: text(review.state)?.toLowerCase() ?? '', body: text(review.body) ?? null, ...(pull ? { pullRequest: pull } : {}), raw: review });
    }
    next.pulls[number] = { lastReviewId: newest, ...(first.headers.get('etag') ? { etag: first.headers.get('etag')! } : {}), ...(pullEtag ? { pullEtag } : {}) };
  }
  return events;
}

/**
 * The comments of a repository listing (`/repos/{o}/{r}/pulls/comments` or `…/issues/comments`)
 * changed since `previous` (less a margin), asked with the ETag of the same request. Without
 * `previous` (the listing's first poll) it only notes where the comments are now.
 */
async function commentsChangedSince(connection: Connection, listing: string, previous: ListingCursor | undefined, signal?: AbortSignal): Promise<{ comments: Json[]; next: ListingCursor }> {
  if (!previous) {
    const newest = await rest(connection, 'GET', `${listing}?sort=updated&direction=desc&per_page=1`, signal ? { signal } : {});
    const latest = Array.isArray(newest.body) && isRecord(newest.body[0]) ? text(newest.body[0].updated_at) : undefined;
    return { comments: [], next: latest ? { since: latest, from: latest } : {} };
  }
  const since = previous.since ? `&since=${new Date(Date.parse(previous.since) - pollMarginMs).toISOString()}` : '';
  const url = `${listing}?sort=updated&direction=asc&per_page=${pageSize}${since}`;
  const first = await rest(connection, 'GET', url, { ...(previous.etag ? { etag: previous.etag } : {}), ...(signal ? { signal } : {}) });
  if (first.status === 304) return { comments: [], next: previous };
  if (!Array.isArray(first.body)) throw new ProviderError(`GitHub answered ${listing} without a list`);
  const comments = first.body.filter(isRecord);
  const more = nextPage(first.headers, connection);
  if (more) comments.push(...(await readAll(connection, more, signal)));
  let newest = previous.since;
  for (const comment of comments) {
    const updated = text(comment.updated_at);
    if (updated && (!newest || updated > newest)) newest = updated;
  }
  // The ETag stays good only while the request stays the same (the same `since`).
  const etag = newest === previous.since ? first.headers.get('etag') : null;
  const from = previous.from;
  const fresh = from ? comments.filter((comment) => Date.parse(text(comment.updated_at) ?? '') > Date.parse(from)) : comments;
  return { comments: fresh, next: { ...(newest ? { since: newest } : {}), ...(etag ? { etag } : {}), ...(from ? { from } : {}) } };
}

/** The repository's review comments changed since the cursor, on open Factory pull requests. */
async function pollComments(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
  const { comments, next: listed } = await commentsChangedSince(connection, `/repos/${repository}/pulls/comments`, previous && { ...(previous.since ? { since: previous.since } : {}), ...(previous.etag ? { etag: previous.etag } : {}), ...(previous.from ? { from: previous.from } : {}) }, signal);
  Object.assign(next, listed);
  const open = openFactoryPulls(runs, repository);
  const events: ReviewEvent[] = [];
  for (const comment of comments) {
    const number = numberFromUrl(text(comment.pull_request_url));
    if (number === undefined || !open.has(number) || typeof comment.id !== 'number') continue;
    const reviewId = comment.pull_request_review_id;
    const own = typeof reviewId === 'number' ? { reviewId } : { commentId: comment.id, place: placeOf(comment) };
    events.push({ number, ...own, author: userOf(comment.user), body: text(comment.body) ?? '', raw: comment });
  }
  return events;
}

/**
 * The repository's issue comments changed since the cursor that begin with `/factory`, on open
 * Factory pull requests (a pull request's conversation is its issue's). Webhooks and polls key
 * such a comment by its id, so the two paths start one run.
 */
async function pollCommands(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
  const { comments, next: listed } = await commentsChangedSince(connection, `/repos/${repository}/issues/comments`, previous?.issueComments, signal);
  next.issueComments = listed;
  const open = openFactoryPulls(runs, repository);
  const events: ReviewEvent[] = [];
  for (const comment of comments) {
    const number = numberFromUrl(text(comment.issue_url));
    const asked = commandOf(comment);
    if (number === undefined || !open.has(number) || typeof comment.id !== 'number' || asked === undefined) continue;
    events.push({ number, commentId: comment.id, author: userOf(comment.user), body: asked, raw: comment });
  }
  return events;
}

/** The pull request reviews provider; `runs` tells which pull requests Factory opened. */
export function githubReviewProvider(runs: PullRequestRuns): TrackerProvider {
  return {
    name: 'GitHub',
    verifyConnection: (connection) => githubProvider.verifyConnection(connection),
    checkTrigger: (trigger, connection) => githubProvider.checkTrigger(trigger, connection),

    async *poll(trigger, connection, cursor, signal) {
      const repository = repoOf(trigger);
      const previous = readCursor(cursor);
      const next: ReviewCursor = { pulls: {} };
      const events = [
        ...(await pollReviews(runs, repository, connection, previous, next, signal)),
        ...(await pollComments(runs, repository, connection, previous, next, signal)),
        ...(await pollCommands(runs, repository, connection, previous, next, signal)),
      ];
      // A review and its comments are one follow-up: decided once, by the review when it was seen.
      const byKey = new Map<string, ReviewEvent>();
      for (const event of events) {
        const key = `${event.number} ${event.reviewId !== undefined ? `review ${event.reviewId}` : `comment ${event.commentId}`}`;
        if (!byKey.has(key)) byKey.set(key, event);
      }
      const page: ObservedIssue[] = [];
      for (const event of byKey.values()) {
        const decided = await decide(runs, trigger, connection, event);
        if (!('ignored' in decided)) page.push(decided);
      }
      if (page.length > 0) yield page;
      return JSON.stringify(next);
    },

    // Unsigned deliveries are refused (verifyWebhook), so no event is ever read back by its key.
    fetchIssue: async () => undefined,
    filter: () => undefined,

    verifyWebhook(webhook, trigger) {
      // A review starts work on a branch that gets pushed: only a delivery signed with the trigger's secret counts.
      return Boolean(trigger.webhookSecret) && verifyGithubSignature(webhook.body, trigger.webhookSecret!, readHeader(webhook, 'x-hub-signature-256'));
    },

    parseWebhook(webhook, trigger, connection): WebhookVerdict {
      const repository = repoOf(trigger);
      const read = readGithubWebhook(webhook, repository);
      if ('verdict' in read) return read.verdict;
      const { event: name, payload } = read;
      if (!connection) return { kind: 'ignored', reason: 'ignored: the trigger has no account' };
      const deliveryId = readHeader(webhook, 'x-github-delivery')?.slice(0, 200);
      const delivery = deliveryId ? { deliveryId } : {};
      if (name === 'pull_request') {
        const pull = isRecord(payload.pull_request) ? payload.pull_request : undefined;
        if (payload.action !== 'closed') return { kind: 'ignored', reason: `ignored: pull request ${text(payload.action) ?? ''}` };
        if (typeof pull?.number !== 'number') return { kind: 'invalid', reason: 'not a GitHub pull_request event: it needs pull_request.number' };
        return { kind: 'deferred', key: `${repository}#${pull.number}`, ...delivery, decide: () => recordClosed(runs, repository, pull) };
      }
      const event = parseEvent(name, payload);
      if ('kind' in event) return event;
      return { kind: 'deferred', key: `${repository}#${event.number}`, ...delivery, decide: () => decide(runs, trigger, connection, event) };
    },

    async upsertComment() {
      throw new ProviderError('A pull request review trigger does not write back: its follow-up runs answer on the pull request');
    },
    async mark() {
      throw new ProviderError('A pull request review trigger does not write back: its follow-up runs answer on the pull request');
    },
  };
}
