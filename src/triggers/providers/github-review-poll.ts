// Polling, the safety net under the webhooks: the repository's review comments and its `/factory`
// issue comments since the last poll, and each open Factory pull request's reviews and state, all
// asked with ETags. The cursor says where each listing was; the first poll only notes it.

import type { Connection } from '../../core/api';
import { isRecord } from '../../core/validate';
import { pageSize } from '../paging';
import { ProviderError, jsonValue, text } from '../provider';
import { readAll, rest } from './github';
import { openFactoryPulls, type PullRequestRuns } from './github-review-decide';
import { closedState, commandOf, numberFromUrl, placeOf, userOf, type ReviewEvent } from './github-review-events';

type Json = Record<string, unknown>;

/** A poll asks for review comments changed since the newest seen less this. */
const pollMarginMs = 120_000;

/** Where a poll is in one of the repository's comment listings. */
interface ListingCursor {
  /** The newest `updated_at` seen (GitHub's clock). */
  since?: string;
  /** The ETag of the listing asked since `since`. */
  etag?: string;
  /** The newest `updated_at` when the first poll noted the listing: comments up to it are never answered, though the margin lists them again. */
  from?: string;
}

export interface ReviewCursor extends ListingCursor {
  /** `since` and `etag`: the repository's review comments. This: its issue comments (`/factory`); absent until first noted. */
  issueComments?: ListingCursor;
  /** Per open Factory pull request: the newest review id seen, the ETag of its reviews, and of the pull request itself. */
  pulls: Record<string, { lastReviewId: number; etag?: string; pullEtag?: string }>;
}

export function readCursor(cursor: string | undefined): ReviewCursor | undefined {
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
export async function pollReviews(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
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
    const listed = await readAll(connection, `/repos/${repository}/pulls/${number}/reviews?per_page=${pageSize}`, { ...(known?.etag ? { etag: known.etag } : {}), ...(signal ? { signal } : {}) });
    if (listed.status === 304 && known) {
      next.pulls[number] = { ...known, ...(pullEtag ? { pullEtag } : {}) };
      continue;
    }
    const seen = known?.lastReviewId ?? 0;
    let newest = seen;
    for (const review of listed.items) {
      if (typeof review.id !== 'number') continue;
      newest = Math.max(newest, review.id);
      if (previous && review.id > seen) events.push({ number, reviewId: review.id, author: userOf(review.user), state: text(review.state)?.toLowerCase() ?? '', body: text(review.body) ?? null, ...(pull ? { pullRequest: pull } : {}), raw: review });
    }
    next.pulls[number] = { lastReviewId: newest, ...(listed.etag ? { etag: listed.etag } : {}), ...(pullEtag ? { pullEtag } : {}) };
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
  const listed = await readAll(connection, url, { ...(previous.etag ? { etag: previous.etag } : {}), ...(signal ? { signal } : {}) });
  if (listed.status === 304) return { comments: [], next: previous };
  if (listed.status === 404) throw new ProviderError(`GitHub answered ${listing} without a list`);
  const comments = listed.items;
  let newest = previous.since;
  for (const comment of comments) {
    const updated = text(comment.updated_at);
    if (updated && (!newest || updated > newest)) newest = updated;
  }
  // The ETag stays good only while the request stays the same (the same `since`).
  const etag = newest === previous.since ? listed.etag : undefined;
  const from = previous.from;
  const fresh = from ? comments.filter((comment) => Date.parse(text(comment.updated_at) ?? '') > Date.parse(from)) : comments;
  return { comments: fresh, next: { ...(newest ? { since: newest } : {}), ...(etag ? { etag } : {}), ...(from ? { from } : {}) } };
}

/** The repository's review comments changed since the cursor, on open Factory pull requests. */
export async function pollComments(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
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
export async function pollCommands(runs: PullRequestRuns, repository: string, connection: Connection, previous: ReviewCursor | undefined, next: ReviewCursor, signal?: AbortSignal): Promise<ReviewEvent[]> {
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
