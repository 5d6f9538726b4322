// Trigger admission: the one place that decides whether an issue seen by a webhook or a poll starts
// a run, and writes down why (the ledger). The webhook server hands each delivery here (`receive`);
// the poller hands each polled issue to `admit`.
//
// The rules:
// - A key starts one run when its issue enters the filter (created matching, or labelled, moved or
//   assigned into it). While it stays in, further events and polls start nothing (200, not created).
// - An issue seen outside the filter (`outside`) is ignored (202); a processed key that is seen
//   outside has left the filter, and its next match starts a new run (re-trigger).
// - A delivery id already decided starts nothing (the provider's retries), and neither does an
//   event older than the latest change already seen of the issue.
// - One key is decided one event at a time (`oneAtATime`), so concurrent duplicates start one run.

import type { Connection, LedgerEntry, Run, RunFollowUp, TriggerConfig, TriggerKind } from '../core/api';
import { errorMessage } from '../core/errors';
import { defaultMaxFollowUps } from '../core/trigger-config';
import type { RunService } from '../engine/runs';
import type { ApprovalCommands } from './approval-commands';
import type { LinearAgentSessions } from './linear-agent';
import type { IncomingWebhook, ObservedIssue, TrackerProvider, WebhookProvider, WebhookVerdict } from './provider';
import { genericWebhookProvider } from './providers/generic';
import type { TriggerEntry, TriggerStates } from './trigger-state';
import { UnsignedReads, overBudget } from './unsigned-webhooks';

/** The answer of a delivery, as the webhook door sends it (spec: webhook endpoint tables). */
export interface DeliveryAnswer {
  status: 200 | 201 | 202 | 400 | 401 | 404 | 409;
  body: Record<string, unknown>;
}

export const ignoredAnswer: DeliveryAnswer = { status: 202, body: { ignored: true } };
/** The 400 answer to a delivery whose issue the service would not give: never the service's own words. */
export const providerRefusedAnswer = 'the provider refused; see the trigger';

/** Runs `decide` once every earlier decision about the same key of the trigger has ended. */
export async function oneAtATime<T>(entry: TriggerEntry, key: string, decide: () => Promise<T>): Promise<T> {
  const previous = entry.locks.get(key) ?? Promise.resolve();
  const current = previous.catch(() => undefined).then(decide);
  entry.locks.set(key, current);
  try {
    return await current;
  } finally {
    if (entry.locks.get(key) === current) entry.locks.delete(key);
  }
}

export interface AdmissionOptions {
  states: TriggerStates;
  runs: Pick<RunService, 'queueRun' | 'allRuns'>;
  trigger: (id: string) => TriggerConfig | undefined;
  /** The tracker kinds this build runs (the generic webhook is always there). */
  providers: Partial<Record<Exclude<TriggerKind, 'webhook'>, TrackerProvider>>;
  connection: (id: string | undefined) => Connection | undefined;
  /** Approval commands in comments (approval-commands.ts). */
  commands: Pick<ApprovalCommands, 'fromWebhook'>;
  /** A Linear agent trigger's deliveries (linear-agent.ts). */
  agentSessions: Pick<LinearAgentSessions, 'receive'>;
  now: () => number;
}

export class Admission {
  private readonly states: TriggerStates;
  private readonly runs: AdmissionOptions['runs'];
  private readonly now: () => number;
  private readonly unsignedReads: UnsignedReads;

  constructor(private readonly options: AdmissionOptions) {
    ({ states: this.states, runs: this.runs, now: this.now } = options);
    this.unsignedReads = new UnsignedReads(options.now);
  }

  // ─── Deliveries ───

  /** Handles one request to /hooks/<trigger-id> and says what to answer (spec: webhook tables). */
  async receive(triggerId: string, webhook: IncomingWebhook): Promise<DeliveryAnswer> {
    const trigger = this.options.trigger(triggerId);
    const provider: WebhookProvider | undefined = trigger?.kind === 'webhook' ? genericWebhookProvider : trigger && this.options.providers[trigger.kind];
    if (!trigger || !provider) return { status: 404, body: { error: 'unknown trigger' } };
    const record = (decision: string) => this.states.record(trigger.id, { at: webhook.receivedAt, source: 'webhook', decision });
    if (!trigger.enabled) {
      record('disabled');
      return { status: 409, body: { error: 'trigger disabled' } };
    }
    if (!provider.verifyWebhook(webhook, trigger)) {
      record('invalid signature');
      return { status: 401, body: { error: 'invalid signature' } };
    }
    if (trigger.kind === 'linear' && trigger.agent) return this.options.agentSessions.receive(trigger, webhook);
    const verdict = provider.parseWebhook(webhook, trigger, this.options.connection(trigger.connectionId));
    // A comment that is an approval command decides the issue's waiting run instead (approval-commands.ts).
    const command = verdict.kind === 'issue' || verdict.kind === 'ignored' ? this.options.commands.fromWebhook(trigger, webhook) : undefined;
    if (command) return command;
    switch (verdict.kind) {
      case 'issue':
        return this.admitEvent(trigger, verdict);
      case 'ignored':
        record(verdict.reason);
        return ignoredAnswer;
      case 'invalid':
        record(`invalid: ${verdict.reason}`);
        return { status: 400, body: { error: verdict.reason } };
      case 'refused':
        record(verdict.reason);
        return { status: 401, body: { error: 'invalid signature' } };
      case 'answer':
        record(verdict.reason);
        return { status: verdict.status, body: verdict.body };
      case 'deferred':
        return this.admitDeferred(trigger, verdict);
    }
  }

  /**
   * Admits an event the provider decides only after asking its service (a pull request review):
   * ignored ones go to the ledger with their reason; a service failure answers 400 without its
   * words, which stay in the ledger (the next poll looks again).
   */
  private async admitDeferred(trigger: TriggerConfig, verdict: Extract<WebhookVerdict, { kind: 'deferred' }>): Promise<DeliveryAnswer> {
    const record = (decision: string) => this.states.record(trigger.id, { at: this.now(), source: 'webhook', key: verdict.key, decision });
    try {
      const decided = await verdict.decide();
      if (!('ignored' in decided)) return await this.admit(trigger, decided, 'webhook', verdict.deliveryId);
      record(decided.ignored);
      return ignoredAnswer;
    } catch (error) {
      record(`error: ${errorMessage(error)}`);
      return { status: 400, body: { error: providerRefusedAnswer } };
    }
  }

  /**
   * Admits the issue of a webhook. Without a secret nothing proved the sender is the service, so a
   * tracker's issue is read from the service by its key: a forged body can name an issue, never
   * make one up. Those reads are shared per issue and limited per trigger (unsigned-webhooks.ts),
   * so forged deliveries cannot spend the account's rate limit.
   */
  private async admitEvent(trigger: TriggerConfig, verdict: Extract<WebhookVerdict, { kind: 'issue' }>): Promise<DeliveryAnswer> {
    const provider = trigger.kind === 'webhook' ? undefined : this.options.providers[trigger.kind];
    const connection = this.options.connection(trigger.connectionId);
    if (trigger.webhookSecret || !provider || !connection) return this.admit(trigger, verdict, 'webhook', verdict.deliveryId);
    const record = (decision: string) => this.states.record(trigger.id, { at: this.now(), source: 'webhook', key: verdict.key, decision });
    const reading = this.unsignedReads.read(trigger.id, verdict.key, () => provider.fetchIssue(trigger, connection, verdict.key));
    if (reading === overBudget) {
      record('dropped: too many unsigned deliveries; set a webhook secret');
      return ignoredAnswer;
    }
    try {
      const fresh = await reading;
      if (fresh) return this.admit(trigger, fresh, 'webhook', verdict.deliveryId);
      record(`ignored: unsigned event for an issue ${provider.name} does not have`);
      return ignoredAnswer;
    } catch (error) {
      // The service's words go to the trigger's ledger only: an anonymous sender learns nothing from them.
      record(`error: ${errorMessage(error)}`);
      return { status: 400, body: { error: providerRefusedAnswer } };
    }
  }

  // ─── Decisions ───

  /** Decides one observed issue of `trigger`; the answer is what a webhook gets back. */
  async admit(trigger: TriggerConfig, observed: ObservedIssue, source: LedgerEntry['source'], deliveryId?: string): Promise<DeliveryAnswer> {
    if (!this.states.has(trigger.id)) return ignoredAnswer; // deleted meanwhile
    const entry = this.states.entry(trigger.id);
    const { key } = observed;
    const record = (decision: string, runId?: string) => this.states.record(trigger.id, { at: this.now(), source, key, decision, ...(runId ? { runId } : {}) });
    const notCreated: DeliveryAnswer = { status: 200, body: { issue: key, created: false } };
    // Follow-ups of one pull request are decided one at a time, so `maxFollowUps` holds under concurrent reviews.
    return oneAtATime(entry, observed.followUp ? `${observed.followUp.repository}#${observed.followUp.number}` : key, async () => {
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
      await oneAtATime(entry, key, async () => {
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
