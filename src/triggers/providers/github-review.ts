// GitHub pull request reviews (PROVIDERS §6): a 'github-review' trigger watches the pull requests
// Factory opened in one repository and answers each review with a follow-up run of its pipeline on
// the pull request's branch. The REST exchange, paging, `/user` and signatures are the GitHub
// issue provider's (github.ts); the files below decide which events count.
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
// The parts: github-review-events.ts reads the events, github-review-decide.ts decides one,
// github-review-poll.ts polls, github-permissions.ts asks who may write; this file joins them.

import { isRecord } from '../../core/validate';
import { ProviderError, readHeader, text, type ObservedIssue, type TrackerProvider, type WebhookVerdict } from '../provider';
import { verifyGithubSignature } from '../secrets';
import { githubProvider, readGithubWebhook, repoOf } from './github';
import { decide, factoryRunOf, type PullRequestRuns } from './github-review-decide';
import { closedState, parseEvent, type ReviewEvent } from './github-review-events';
import { pollComments, pollCommands, pollReviews, readCursor, type ReviewCursor } from './github-review-poll';

type Json = Record<string, unknown>;

/** Records a closed pull request's state on the runs that opened or updated it; starts nothing. */
async function recordClosed(runs: PullRequestRuns, repository: string, pull: Json): Promise<{ ignored: string }> {
  const number = pull.number as number;
  const state = closedState(pull) ?? 'closed';
  if (!factoryRunOf(runs, repository, number)) return { ignored: `ignored: #${number} is not a pull request Factory opened` };
  const changed = await runs.markPullRequest(repository, number, state);
  return { ignored: `#${number} ${state}: recorded on ${changed.length === 1 ? 'its run' : `${changed.length} runs`}; nothing to start` };
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
