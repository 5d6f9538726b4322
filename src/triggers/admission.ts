// Trigger admission: the one place that decides whether an issue seen by a webhook or a poll starts
// a run, and writes down why (the ledger). Used by every trigger kind.
//
// The rules:
// - A key starts one run when its issue enters the filter (created matching, or labelled, moved or
//   assigned into it). While it stays in, further events and polls start nothing (200, not created).
// - An issue seen outside the filter (`outside`) is ignored (202); a processed key that is seen
//   outside has left the filter, and its next match starts a new run (re-trigger).
// - A delivery id already decided starts nothing (the provider's retries), and neither does an
//   event older than the latest change already seen of the issue.
// - One key is decided one event at a time, so concurrent duplicates start one run.

import type { LedgerEntry, Run, RunFollowUp, TriggerConfig } from '../core/api';
import { errorMessage } from '../core/errors';
import { defaultMaxFollowUps } from '../core/trigger-config';
import type { RunService } from '../engine/runs';
import type { ObservedIssue } from './provider';
import type { TriggerEntry, TriggerStates } from './trigger-state';

/** The answer of a delivery, as the webhook door sends it (spec: webhook endpoint tables). */
export interface DeliveryAnswer {
  status: 200 | 201 | 202 | 400 | 401 | 404 | 409;
  body: Record<string, unknown>;
}

export const ignoredAnswer: DeliveryAnswer = { status: 202, body: { ignored: true } };

export class Admission {
  constructor(
    private readonly states: TriggerStates,
    private readonly runs: Pick<RunService, 'queueRun' | 'allRuns'>,
    private readonly now: () => number,
  ) {}

  /** Decides one observed issue of `trigger`; the answer is what a webhook gets back. */
  async admit(trigger: TriggerConfig, observed: ObservedIssue, source: LedgerEntry['source'], deliveryId?: string): Promise<DeliveryAnswer> {
    if (!this.states.has(trigger.id)) return ignoredAnswer; // deleted meanwhile
    const entry = this.states.entry(trigger.id);
    const { key } = observed;
    const record = (decision: string, runId?: string) => this.states.record(trigger.id, { at: this.now(), source, key, decision, ...(runId ? { runId } : {}) });
    const notCreated: DeliveryAnswer = { status: 200, body: { issue: key, created: false } };
    // Follow-ups of one pull request are decided one at a time, so `maxFollowUps` holds under concurrent reviews.
    return this.states.withKey(entry, observed.followUp ? `${observed.followUp.repository}#${observed.followUp.number}` : key, async () => {
      if (deliveryId !== undefined && Object.hasOwn(entry.file.deliveries, deliveryId)) {
        record(`already processed: delivery ${deliveryId} was decided before`);
        return notCreated;
      }
      const answer = await this.decide(trigger, entry, observed, source, record, notCreated);
      if (deliveryId !== undefined && answer.status !== 400) this.states.rememberDelivery(entry, deliveryId);
      return answer;
    });
  }

  private async decide(trigger: TriggerConfig, entry: TriggerEntry, observed: ObservedIssue, source: LedgerEntry['source'], record: (decision: string, runId?: string) => void, notCreated: DeliveryAnswer): Promise<DeliveryAnswer> {
    const { key, updatedAt } = observed;
    const seen = entry.seen.get(key);
    if (updatedAt !== undefined && seen !== undefined && Date.parse(updatedAt) < Date.parse(seen)) {
      record(`ignored: older than the change of ${seen} already seen`);
      return notCreated;
    }
    if (updatedAt !== undefined) entry.seen.set(key, updatedAt);
    if (observed.outside !== undefined) {
      if (!entry.processed.has(key)) {
        if (source !== 'poll') record(observed.outside); // a poll sees every change of a team: only news is written
        return ignoredAnswer;
      }
      this.states.leave(entry, key);
      record(`left the filter (${observed.outside.replace(/^ignored: /, '')}): its next match starts a new run`);
      await this.states.persist(trigger.id); // durable before anything can bring the issue back
      return ignoredAnswer;
    }
    if (entry.processed.has(key)) {
      record('already processed');
      return notCreated;
    }
    const { followUp } = observed;
    if (followUp) {
      const limit = trigger.maxFollowUps ?? defaultMaxFollowUps;
      const count = followUpsOf(this.runs.allRuns(), followUp);
      if (count >= limit) {
        record(`ignored: ${count} follow-up${count === 1 ? '' : 's'} already for #${followUp.number} (maxFollowUps)`);
        return ignoredAnswer;
      }
    }
    try {
      // A follow-up's run keeps its issue's own key (the pull request's); `key` names the review.
      const issue = followUp ? { ...observed.issue } : { ...observed.issue, key };
      const origin = { triggerId: trigger.id, ...(followUp ? { followUp } : {}) };
      const runId = await this.runs.queueRun({ pipelineId: trigger.pipelineId, issue, variables: trigger.variables ?? {} }, origin);
      entry.processed.set(key, this.now());
      entry.file.state.processedCount = entry.processed.size;
      record(`started ${runId}`, runId);
      return { status: 201, body: { issue: key, created: true } };
    } catch (error) {
      const message = errorMessage(error);
      entry.file.state.lastError = message;
      record(`error: ${message}`);
      return { status: 400, body: { error: message } };
    }
  }

  /**
   * After a complete full poll that began at `startedAt`: a processed key it did not yield has left
   * the filter, unless it entered after the poll began (a webhook meanwhile).
   */
  async leaveUnseen(trigger: TriggerConfig, yielded: ReadonlySet<string>, startedAt: number): Promise<void> {
    if (trigger.kind === 'github-review') return; // a review answered stays answered: its key never leaves
    const entry = this.states.entry(trigger.id);
    for (const [key, enteredAt] of [...entry.processed]) {
      if (yielded.has(key) || enteredAt >= startedAt) continue;
      await this.states.withKey(entry, key, async () => {
        if (!entry.processed.has(key)) return;
        this.states.leave(entry, key);
        this.states.record(trigger.id, { at: this.now(), source: 'poll', key, decision: 'left the filter (no longer among the matching issues): its next match starts a new run' });
        await this.states.persist(trigger.id);
      });
    }
  }
}

/** The follow-up runs of a pull request among `runs` (any trigger, any status). */
export function followUpsOf(runs: Iterable<Run>, pull: Pick<RunFollowUp, 'repository' | 'number'>): number {
  let count = 0;
  for (const run of runs) if (run.followUp && run.followUp.number === pull.number && run.followUp.repository.toLowerCase() === pull.repository.toLowerCase()) count++;
  return count;
}
