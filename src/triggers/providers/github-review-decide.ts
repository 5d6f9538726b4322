// Decides whether one review event starts a follow-up run: a pull request Factory opened, still
// open, a reviewer other than Factory with write access, a review with text. It reads what the runs
// know and asks GitHub for the rest; the admission then dedups and counts (admission.ts).

import type { Connection, Run, RunFollowUp, TriggerConfig } from '../../core/api';
import { quote } from '../../core/errors';
import { isRecord } from '../../core/validate';
import type { RunService } from '../../engine/runs';
import { pageSize } from '../paging';
import { same, text, type ObservedIssue } from '../provider';
import { followUpKey } from '../trigger-state';
import { ownUserId, readAll, repoOf, rest } from './github';
import { permissionOf, writeRoles } from './github-permissions';
import { closedState, placeOf, type ReviewEvent } from './github-review-events';

type Json = Record<string, unknown>;

/** What the provider needs of the runs: which pull requests Factory opened, and where their state goes. */
export type PullRequestRuns = Pick<RunService, 'allRuns' | 'getRun' | 'markPullRequest'>;

/** Factory's pull requests come from branches named so (engine/workspace.ts). */
const factoryBranchPrefix = 'factory/';

// ─── What the runs know ───

/** The latest run that opened, updated or continued the pull request, with the step that did; undefined when none did. */
export function factoryRunOf(runs: PullRequestRuns, repository: string, number: number): { run: Run; stepIndex?: number } | undefined {
  let found: { run: Run; stepIndex?: number } | undefined;
  for (const run of runs.allRuns()) {
    const stepIndex = run.steps.findIndex((step) => step.pullRequest !== undefined && same(step.pullRequest.repository, repository) && step.pullRequest.number === number);
    if (stepIndex >= 0) found = { run, stepIndex };
    else if (run.followUp && same(run.followUp.repository, repository) && run.followUp.number === number) found = { run };
  }
  return found;
}

/** The numbers of the repository's pull requests Factory opened that no run knows closed. */
export function openFactoryPulls(runs: PullRequestRuns, repository: string): Set<number> {
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
export async function decide(runs: PullRequestRuns, trigger: TriggerConfig, connection: Connection, event: ReviewEvent): Promise<ObservedIssue | { ignored: string }> {
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
    const comments = (await readAll(connection, `/repos/${repository}/pulls/${event.number}/reviews/${event.reviewId}/comments?per_page=${pageSize}`)).items;
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
