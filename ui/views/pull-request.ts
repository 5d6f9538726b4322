// A run's pull request as the Run and Runs screens show it (issue 23.5): the one a step of the run
// opened or updated (number, last known state, link), the one a follow-up run continues ("Follow-up
// of #12 (review by @alice)"), and the runs that followed it up, found among the runs the page has.

import type { PullRequestRef, Run, RunFollowUp } from '../../src/core/api';
import { externalLink, type AppContext } from '../app';
import { h } from '../dom';
import { statusPill } from './runs';

type PullRequestState = NonNullable<PullRequestRef['state']>;

const stateGlyphs: Record<PullRequestState, string> = { open: '○', merged: '✓', closed: '✕' };

/** The pull request the run's steps opened or updated last; undefined when none did. */
function pullRequestOf(run: Run): PullRequestRef | undefined {
  return run.steps.filter((step) => step.pullRequest).at(-1)?.pullRequest;
}

/** Whether `pullRequest` (or a follow-up's) is that repository's pull request `number`. */
function isPullRequest(candidate: Pick<PullRequestRef, 'repository' | 'number'> | undefined, repository: string, number: number): boolean {
  return candidate !== undefined && candidate.number === number && candidate.repository.toLowerCase() === repository.toLowerCase();
}

/** The last known state of a pull request: its own, else the one any of `runs` recorded for it. */
function pullRequestState(repository: string, number: number, runs: readonly Run[], own?: PullRequestRef['state']): PullRequestState | undefined {
  if (own) return own;
  for (const run of runs) {
    const state = run.steps.find((step) => isPullRequest(step.pullRequest, repository, number) && step.pullRequest!.state)?.pullRequest?.state;
    if (state) return state;
  }
  return undefined;
}

/** A pill for a pull request's state: its word and a glyph, so colour is not the only signal. */
function pullRequestPill(state: PullRequestState): HTMLElement {
  return h('span', { class: `status pr-state pr-${state}`, title: `Pull request ${state}`, 'data-test': 'pr-state' },
    h('span', { class: 'glyph', 'data-glyph': stateGlyphs[state], 'aria-hidden': 'true' }), state);
}

/** The runs among `runs` that follow up this pull request, oldest first, `exceptRunId` left out. */
export function followUpsOf(repository: string, number: number, runs: readonly Run[], exceptRunId: string): Run[] {
  return runs.filter((run) => run.id !== exceptRunId && isPullRequest(run.followUp, repository, number)).sort((a, b) => a.createdAt - b.createdAt);
}

/** `review by @alice` / `comment by @alice` from the event the follow-up started from (issue.raw), when it names its author. */
function followUpOrigin(run: Run): string | undefined {
  const followUp = run.followUp;
  if (!followUp) return undefined;
  const kind = followUp.reviewId !== undefined ? 'review' : followUp.commentId !== undefined ? 'comment' : undefined;
  const raw = run.issue?.raw as Record<string, unknown> | undefined;
  const login = loginOf(raw?.review) ?? loginOf(raw?.comment) ?? loginOf(raw) ?? loginOf(raw?.sender, true);
  if (!kind) return login ? `by @${login}` : undefined;
  return login ? `${kind} by @${login}` : kind;
}

/** `value.user.login` (or `value.login` for a sender), when it is a GitHub login. */
function loginOf(value: unknown, isUser = false): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const user = isUser ? value : (value as { user?: unknown }).user;
  const login = typeof user === 'object' && user !== null ? (user as { login?: unknown }).login : undefined;
  return typeof login === 'string' && /^[A-Za-z0-9-]{1,39}(\[bot\])?$/.test(login) ? login : undefined;
}

/**
 * The Run page's pull request block: `Follow-up of #12 (review by @alice)` for a follow-up, the
 * pull request a step opened with its state, and the runs that followed it up (status, link).
 * Null when the run has nothing to do with a pull request.
 */
export function pullRequestSection(context: AppContext, run: Run, runs: readonly Run[]): HTMLElement | null {
  const opened = pullRequestOf(run);
  const followed: RunFollowUp | undefined = run.followUp;
  const target = opened ?? followed;
  if (!target) return null;
  const lines: HTMLElement[] = [];
  if (followed) {
    const origin = followUpOrigin(run);
    lines.push(h('p', { class: 'pr-line', 'data-test': 'follow-up-of' }, 'Follow-up of ',
      externalLink(context, followed.url, `#${followed.number}`, 'pr-link'), origin ? ` (${origin})` : null));
  }
  if (opened && !(followed && isPullRequest(followed, opened.repository, opened.number))) {
    const state = pullRequestState(opened.repository, opened.number, runs, opened.state);
    lines.push(h('p', { class: 'pr-line', 'data-test': 'pull-request' }, 'Pull request ',
      externalLink(context, opened.url, `#${opened.number}`, 'pr-link'), ' ', state ? pullRequestPill(state) : null,
      h('span', { class: 'meta' }, ` ${opened.repository} · ${opened.branch}`)));
  } else if (followed) {
    const state = pullRequestState(followed.repository, followed.number, runs, opened?.state);
    if (state) lines[0]!.append(' ', pullRequestPill(state));
  }
  const followUps = followUpsOf(target.repository, target.number, runs, run.id);
  if (followUps.length > 0) {
    lines.push(h('div', { class: 'pr-follow-ups' },
      h('span', { class: 'meta' }, followed ? 'Other follow-ups of this pull request' : 'Follow-ups'),
      h('ul', { 'data-test': 'follow-ups' }, followUps.map((followUp) => h('li', {},
        statusPill(followUp.status),
        h('a', { href: `#/runs/${encodeURIComponent(followUp.id)}`, 'data-test': 'follow-up' }, followUp.issue?.title || followUp.pipelineName),
        followUpOrigin(followUp) ? h('span', { class: 'meta' }, ` ${followUpOrigin(followUp)}`) : null)))));
  }
  return h('div', { class: 'run-pr', 'data-test': 'run-pr' }, lines);
}

/** The Runs list's short note of the run's pull request: `#12 · merged` (the row is a link, so this is text). */
export function pullRequestChip(run: Run, runs: readonly Run[]): HTMLElement | null {
  const pullRequest = pullRequestOf(run);
  if (!pullRequest) return null;
  const state = pullRequestState(pullRequest.repository, pullRequest.number, runs, pullRequest.state);
  const text = `#${pullRequest.number}${state ? ` · ${state}` : ''}`;
  return h('span', { class: `run-row-pr meta${state ? ` pr-${state}` : ''}`, 'data-test': 'run-pr', title: `Pull request ${pullRequest.repository}#${pullRequest.number}${state ? ` (${state})` : ''}` }, text);
}
