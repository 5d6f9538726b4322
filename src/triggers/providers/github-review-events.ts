// What a reviewer did on a pull request, as one ReviewEvent, read from a webhook body (parseEvent)
// or from the items a poll lists (userOf, placeOf, commandOf). Nothing here asks GitHub anything.

import type { PullRequestRef } from '../../core/api';
import { isRecord } from '../../core/validate';
import { text, type WebhookVerdict } from '../provider';

type Json = Record<string, unknown>;
type ClosedState = Exclude<NonNullable<PullRequestRef['state']>, 'open'>;

/** The comment that asks Factory for a follow-up run on a pull request. */
const followUpCommand = '/factory';

/** One thing a reviewer did, from a webhook or a poll, before it is checked. */
export interface ReviewEvent {
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

export function userOf(user: unknown): ReviewEvent['author'] {
  return isRecord(user) && text(user.login) && (typeof user.id === 'number' || typeof user.id === 'string') ? { login: text(user.login)!, id: String(user.id) } : undefined;
}

/** `path:line` of a review comment (the original line when the line is outdated). */
export function placeOf(comment: Json): string {
  const line = typeof comment.line === 'number' ? comment.line : comment.original_line;
  return `${text(comment.path) ?? 'the pull request'}${typeof line === 'number' ? `:${line}` : ''}`;
}

/** The pull request's number from a review comment's `pull_request_url` or an issue comment's `issue_url` (a poll's comments have no `pull_request`). */
export function numberFromUrl(url: string | undefined): number | undefined {
  const number = /\/(?:pulls|issues)\/(\d+)$/.exec(url ?? '')?.[1];
  return number === undefined ? undefined : Number(number);
}

/** 'merged' or 'closed' for a pull request that is no longer open; undefined while it is open. */
export function closedState(pull: Json): ClosedState | undefined {
  if (pull.state !== 'closed') return undefined;
  return pull.merged === true || typeof pull.merged_at === 'string' ? 'merged' : 'closed';
}

/** What a comment beginning with `/factory` asks (the text after it); undefined for any other comment. */
export function commandOf(comment: Json): string | undefined {
  const body = (text(comment.body) ?? '').trimStart();
  return body.startsWith(followUpCommand) ? body.slice(followUpCommand.length).trim() : undefined;
}

/** The event a webhook body describes, or the verdict when it is not one that counts. */
export function parseEvent(name: string, payload: Json): ReviewEvent | WebhookVerdict {
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
