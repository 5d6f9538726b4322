// Who hears about runs and triggers: every notice goes to the inbox, and to the channels that take
// its event. Runs are told of by their lifecycle events, with the run as it is then.

import type { ChannelEvent, Run, StepRun } from '../core/api';
import { errorMessage } from '../core/errors';
import { clockWords } from '../engine/rate-limit-waits';
import type { RunLifecycleEvent } from '../engine/runs';
import type { ChannelService } from './channels';
import type { Inbox, NewInboxItem } from './inbox';
import { noticeForRun, noticeForTriggerError } from './message';

export class Notices {
  constructor(
    private readonly inbox: Pick<Inbox, 'add' | 'markRead' | 'unreadApprovals'>,
    private readonly channels: Pick<ChannelService, 'wants' | 'notify'>,
    /** A link to a run in the remote UI, when remote access runs. */
    private readonly runUrl: (runId: string) => string | undefined,
  ) {}

  /** The usage-limit waits already told of: run, step, attempt and the first wait's time. */
  private readonly rateLimitWaits = new Set<string>();

  /**
   * A run waits for approval, succeeded, failed or was rejected (a stop's `interrupted` is not
   * news); an agent step began waiting out the model's usage limit (one inbox item for its waits
   * in a row; channels are not told, as for stalls).
   */
  runEvent(event: RunLifecycleEvent): void {
    const { run } = event;
    if (event.type === 'step-waiting') return this.runNotice(run, 'run.waiting', `${event.step.budgetStop ? 'Budget reached' : 'Approval needed'}: ${event.step.name}`, event.step.message);
    if (event.type === 'step-liveness') return this.rateLimited(run, event.step);
    if (event.type !== 'finished') return;
    // A run that ended waits on nothing: its approval items are read (a decision marked them already).
    this.inbox.markRead(this.inbox.unreadApprovals(run.id)).catch((error) => console.error(`Inbox: ${errorMessage(error)}`));
    if (run.status === 'succeeded') this.runNotice(run, 'run.succeeded', `Succeeded: ${describe(run)}`);
    else if (run.status === 'failed' && run.error !== 'interrupted') this.runNotice(run, 'run.failed', `Failed: ${describe(run)}`, run.error);
    else if (run.status === 'rejected') this.runNotice(run, 'run.failed', `Rejected: ${describe(run)}`, run.error);
  }

  /** A trigger (or the webhook server) failed: one inbox item titled "Trigger errors", and the channels. */
  triggerError(text: string, triggerName?: string): void {
    this.add({ kind: 'trigger.error', title: triggerName ? `Trigger errors: ${triggerName}` : 'Trigger errors', body: text });
    this.channels.notify('trigger.error', noticeForTriggerError(text, triggerName));
  }

  /** An agent step printed nothing for its stall time: an inbox item (channels are not told). */
  stepStalled(runId: string, stepId: string, message: string): void {
    this.add({ kind: 'step.stalled', title: `Step ${stepId} may be stuck`, body: message, runId });
  }

  /** An agent step spent 80% of a cap (engine/budget.ts): an inbox item, like a stall (channels are not told). */
  budgetNearing(runId: string, stepId: string, message: string): void {
    this.add({ kind: 'step.budget', title: `Step ${stepId} is near its budget`, body: message, runId });
  }

  /** The first of a step's waits in a row for the usage limit (they share `livenessSince`). */
  private rateLimited(run: Readonly<Run>, step: Readonly<StepRun>): void {
    if (step.liveness !== 'rateLimited' || step.resumeAt === undefined) return;
    const waits = `${run.id} ${step.id} ${step.attempt} ${step.livenessSince}`;
    if (this.rateLimitWaits.has(waits)) return;
    this.rateLimitWaits.add(waits);
    if (this.rateLimitWaits.size > 1000) this.rateLimitWaits.delete(this.rateLimitWaits.values().next().value!);
    const body = `${heading(run)}\nThe agent reached the model provider's usage limit. The step goes on by itself at ${clockWords(step.resumeAt)}; the run's Resume now goes on at once, Stop waiting fails it.`;
    this.add({ kind: 'step.rateLimited', title: `Step ${step.name} waits for the usage limit`, body, runId: run.id });
  }

  private runNotice(run: Readonly<Run>, kind: ChannelEvent, title: string, body?: string): void {
    const text = [heading(run), body].filter(Boolean).join('\n');
    this.add({ kind, title, body: text, runId: run.id });
    if (this.channels.wants(kind)) this.channels.notify(kind, noticeForRun(run as Run, kind, this.runUrl(run.id)));
  }

  private add(item: NewInboxItem): void {
    this.inbox.add(item).catch((error) => console.error(`Inbox: ${errorMessage(error)}`));
  }
}

/** An item's first line: the pipeline, and the issue when there is one. */
function heading(run: Readonly<Run>): string {
  return `${run.pipelineName}${run.issue ? ` · ${describe(run)}` : ''}`;
}

function describe(run: Readonly<Run>): string {
  return run.issue ? `${run.issue.title}${run.issue.key ? ` (${run.issue.key})` : ''}` : run.pipelineName;
}
