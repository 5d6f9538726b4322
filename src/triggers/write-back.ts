// Write-back: a run started by a tracker trigger keeps ONE comment on its issue, created when the
// run starts and edited in place when a step waits and when the run ends (retries of the run edit
// the same comment), and optionally marks the issue (a state, or a label) as it starts and ends.
//
// What the comment must show is computed at once from the run's lifecycle event; a job per run
// then brings the issue there, retrying with back-off. Failures are logged on the run and in the
// ledger and never touch the run itself. Each run's comment id and the status it shows are kept in
// the trigger's file; a run whose comment shows another status than the run has (a crash, a stop)
// is brought up to date at the next start, and a comment whose id was lost is found again by its
// first line (which names the run) among the comments of the account's own user, so a crash never
// makes a second comment and never takes over someone else's.

import type { ApprovalDecider, Connection, Issue, Run, RunStatus, StepRun, TriggerConfig, TriggerKind } from '../core/api';
import { errorMessage } from '../core/errors';
import { formatDuration, selectedLabels } from '../core/runs';
import { setTimer } from '../core/timers';
import type { RunLifecycleEvent, RunService } from '../engine/runs';
import type { CommentBlock, CommentDocument, CommentInline } from './comment-text';
import { runPullRequests, type RunPullRequest } from './github-pulls';
import { livenessInWords, usageInWords } from './liveness-words';
import { ProviderError, type TrackerProvider } from './provider';
import type { TriggerStates } from './trigger-state';

/** Waits before the 2nd, 3rd, ... try of a failed write-back; a rate limit's own time wins. */
const defaultRetryDelaysMs: readonly number[] = [5_000, 30_000, 120_000, 600_000, 1_800_000];
/** Characters of the last step's output quoted in the comment (its end). */
const outputLimit = 1500;
const messageLimit = 300;
/** How long the record of a finished run whose comment is up to date is kept. */
const recordKeepMs = 7 * 24 * 3600_000;

interface WriteBackOptions {
  states: TriggerStates;
  providers: Partial<Record<TriggerKind, TrackerProvider>>;
  trigger: (id: string) => TriggerConfig | undefined;
  connection: (id: string | undefined) => Connection | undefined;
  /** A line in the run's own log. */
  runLog: (runId: string, line: string) => void;
  runUrl: (runId: string) => string | undefined;
  retryDelaysMs?: readonly number[];
  now: () => number;
}

/** Where the issue should be brought for one run. */
interface Desired {
  status: RunStatus;
  comment?: CommentDocument;
  mark?: string;
}

interface Job {
  triggerId: string;
  issue: Issue;
  desired: Desired;
  version: number;
  done?: Promise<void>;
}

export class WriteBack {
  private readonly jobs = new Map<string, Job>();
  private readonly wakers = new Set<() => void>();
  private stopped = false;

  constructor(private readonly options: WriteBackOptions) {}

  /** Subscriber of the run lifecycle: what the issue of a triggered run must show now. */
  runEvent(event: RunLifecycleEvent): void {
    this.want(event.run, event.type === 'started' && !event.resumed);
  }

  /**
   * At start: runs whose comment does not show their status (a crash, a stop) are brought up to
   * date. Records of finished runs shown for a week are dropped: a retry finds its comment by the
   * run id it carries.
   */
  async reconcile(runs: Pick<RunService, 'allRuns' | 'getRun'>): Promise<void> {
    const statuses = new Map([...runs.allRuns()].map((run) => [run.id, run]));
    for (const trigger of this.triggersWithWriteBack()) {
      const records = this.options.states.entry(trigger.id).file.writeBacks;
      for (const [runId, record] of Object.entries(records)) {
        const run = statuses.get(runId);
        if (!run || (run.status === record.shown && (run.finishedAt ?? Infinity) < this.options.now() - recordKeepMs)) delete records[runId];
        else if (run.status !== 'queued' && run.status !== record.shown && !this.jobs.has(runId)) {
          const full = await runs.getRun(runId).catch(() => undefined);
          if (full) this.want(full, false);
        }
      }
    }
  }

  /** Stops retrying and waits for the writes under way (each bounded by the client's timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.wakers) wake();
    await Promise.all([...this.jobs.values()].map((job) => job.done));
  }

  private triggersWithWriteBack(): TriggerConfig[] {
    return Object.keys(this.options.states.states()).map((id) => this.options.trigger(id)).filter((trigger): trigger is TriggerConfig => Boolean(trigger?.writeBack && this.options.providers[trigger.kind]));
  }

  private want(run: Readonly<Run>, starting: boolean): void {
    const trigger = run.triggerId ? this.options.trigger(run.triggerId) : undefined;
    if (!trigger?.writeBack || !run.issue || !this.options.providers[trigger.kind] || this.stopped) return;
    const marks = trigger.writeBack.states ?? trigger.writeBack.labels ?? {};
    const mark = starting ? marks.started : run.status === 'succeeded' ? marks.succeeded : run.status === 'failed' || run.status === 'rejected' ? marks.failed : undefined;
    const notice = this.options.states.entry(trigger.id).file.writeBacks[run.id]?.notice;
    const comment = trigger.writeBack.comment ? runComment(run, this.options.runUrl(run.id), runPullRequests(run, (id) => this.options.connection(id)), notice) : undefined;
    const desired: Desired = { status: run.status, ...(comment ? { comment } : {}), ...(mark ? { mark } : {}) };
    if (desired.comment === undefined && desired.mark === undefined) return;
    const job = this.jobs.get(run.id);
    if (job) {
      if (JSON.stringify(job.desired) === JSON.stringify(desired)) return;
      job.desired = desired;
      job.version += 1;
      return;
    }
    const created: Job = { triggerId: trigger.id, issue: run.issue, desired, version: 0 };
    this.jobs.set(run.id, created);
    created.done = this.work(run.id, created).finally(() => this.jobs.delete(run.id));
  }

  /**
   * Shows `notice` (why an approval command was not taken) in the run's one comment, in place of
   * the one before: the comment is edited, never answered, so commands cannot make a reply storm.
   */
  notice(run: Readonly<Run>, notice: CommentInline[]): void {
    const trigger = run.triggerId ? this.options.trigger(run.triggerId) : undefined;
    if (!trigger?.writeBack?.comment) return;
    const records = this.options.states.entry(trigger.id).file.writeBacks;
    records[run.id] = { ...records[run.id], notice };
    this.options.states.changed(trigger.id);
    this.want(run, false);
  }

  /** Applies the job's latest wish until none is newer; retries failures with back-off. */
  private async work(runId: string, job: Job): Promise<void> {
    const delays = this.options.retryDelaysMs ?? defaultRetryDelaysMs;
    let failures = 0;
    while (!this.stopped) {
      const version = job.version;
      try {
        await this.apply(runId, job, job.desired);
        if (job.version === version) return;
        failures = 0;
      } catch (error) {
        const message = errorMessage(error);
        const permanent = error instanceof ProviderError && !error.retryable && error.retryAt === undefined;
        const wait = permanent || failures >= delays.length ? undefined : Math.max(delays[failures]!, (error instanceof ProviderError ? error.retryAt ?? 0 : 0) - this.options.now());
        failures += 1;
        const decision = `write-back failed: ${message}${wait === undefined ? '; given up' : `; trying again in ${formatDuration(wait)}`}`;
        this.options.runLog(runId, `Write-back to the issue failed: ${message}${wait === undefined ? ' (given up)' : ` (trying again in ${formatDuration(wait)})`}`);
        this.options.states.record(job.triggerId, { at: this.options.now(), source: 'write-back', key: job.issue.key, decision, runId });
        if (wait === undefined) return;
        await this.sleep(wait);
      }
    }
  }

  private async apply(runId: string, job: Job, desired: Desired): Promise<void> {
    const trigger = this.options.trigger(job.triggerId);
    const provider = trigger && this.options.providers[trigger.kind];
    const connection = this.options.connection(trigger?.connectionId);
    if (!trigger || !provider || !connection) throw new ProviderError('the trigger or its account no longer exists');
    const states = this.options.states;
    const records = states.entry(trigger.id).file.writeBacks;
    let record = records[runId];
    if (!record) {
      // Written before the service is asked, so a crash from here on is caught up at the next start.
      record = records[runId] = {};
      await states.persist(trigger.id);
    }
    const target = { connection, trigger, issue: job.issue };
    if (desired.comment !== undefined) {
      const known = record.commentId;
      record.commentId = await provider.upsertComment(target, desired.comment, known);
      if (!known) {
        this.options.runLog(runId, `Commented on ${job.issue.key ?? 'the issue'}${job.issue.url ? ` (${job.issue.url})` : ''}`);
        await states.persist(trigger.id);
      }
    }
    if (desired.mark !== undefined && desired.mark !== record.mark) {
      await provider.mark(target, desired.mark, record.mark);
      this.options.runLog(runId, `Marked ${job.issue.key ?? 'the issue'} as ${desired.mark}`);
      record.mark = desired.mark;
    }
    record.shown = desired.status;
    states.changed(trigger.id);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimer(wake, ms); // a rate limit's reset may be a month ahead
      this.wakers.add(wake);
    });
  }
}

const statusWords: Record<RunStatus, string> = {
  queued: '○ queued',
  running: '◔ running',
  waiting: '‖ waiting for approval',
  succeeded: '✓ succeeded',
  failed: '✕ failed',
  cancelled: '⊘ cancelled',
  rejected: '⊘ rejected',
};

/**
 * The comment of a run: after `Factory · run <id>`, its pipeline; the status (the waiting step and
 * its message; the duration of a finished run, the failing step's error); its pull requests; the
 * end of the last step's output; a link to the run when known. Names, messages, errors and outputs
 * are outside text: each tracker's renderer (comment-text.ts) writes them so they stay inert.
 */
export function runComment(run: Readonly<Run>, runUrl: string | undefined, pullRequests: readonly RunPullRequest[] = [], notice?: readonly CommentInline[], now = Date.now()): CommentDocument {
  const words = (text: string): CommentInline => ({ kind: 'words', text });
  const outside = (text: string): CommentInline => ({ kind: 'outside', text });
  const status: CommentInline[] = [words(`Status: ${statusWords[run.status]}`)];
  const waiting = run.steps.find((step) => step.status === 'waiting');
  if (waiting) {
    status.push(words(' at '), outside(waiting.name));
    // A step waiting out the model's usage limit says when it goes on (liveness-words.ts).
    if (waiting.liveness === 'rateLimited') status.push(words(`: ${livenessInWords(waiting, now)}`));
    else if (waiting.message?.trim()) status.push(words(': '), outside(cut(waiting.message.trim(), messageLimit)));
  } else if (run.status === 'running') {
    const index = run.steps.findIndex((step) => step.status === 'running');
    const liveness = index >= 0 ? livenessInWords(run.steps[index]!, now) : '';
    if (index >= 0) status.push(words(` (step ${index + 1} of ${run.steps.length}: `), outside(run.steps[index]!.name), words(liveness ? `, ${liveness})` : ')'));
  } else if (run.finishedAt !== undefined && run.startedAt !== undefined) status.push(words(` in ${formatDuration(run.finishedAt - run.startedAt)}`));
  const blocks: CommentBlock[] = [{ kind: 'paragraph', parts: status }];
  if (run.status === 'failed' || run.status === 'rejected') blocks.push({ kind: 'paragraph', parts: [words('Error: '), outside(cut(run.error ?? 'unknown error', messageLimit))] });
  // What the agents used: the run's total, then each step's.
  const used = usageInWords(run.usage);
  if (used) {
    const steps = run.steps.filter((step) => usageInWords(step.usage));
    const each = steps.length > 1 ? steps.flatMap((step, index): CommentInline[] => [words(index === 0 ? ' (' : '; '), outside(step.name), words(` ${usageInWords(step.usage)}`)]) : [];
    blocks.push({ kind: 'paragraph', parts: [words(`Used ${used}`), ...each, ...(each.length ? [words(')')] : [])] });
  }
  const decision = latestDecision(run);
  if (decision) blocks.push({ kind: 'paragraph', parts: decision });
  if (notice?.length) blocks.push({ kind: 'paragraph', parts: [...notice] });
  for (const pull of pullRequests) {
    const named = `Pull request #${pull.number}`;
    blocks.push({ kind: 'paragraph', parts: pull.link ? [{ kind: 'link', text: named, url: pull.link }, words(` in ${pull.repository}`)] : [words(`${named} in ${pull.repository}`)] });
  }
  const last = run.status === 'succeeded' || run.status === 'failed' ? run.steps.findLast((step) => step.output?.trim()) : undefined;
  if (last?.output) {
    const tail = last.output.trim().slice(-outputLimit);
    blocks.push({ kind: 'paragraph', parts: [words('Output of '), outside(last.name), words(tail.length < last.output.trim().length ? ' (its end):' : ':')] }, { kind: 'output', text: tail });
  }
  if (runUrl) blocks.push({ kind: 'paragraph', parts: [{ kind: 'link', text: 'Open the run in Factory', url: runUrl }] });
  return { runId: run.id, header: [words(' · pipeline '), outside(run.pipelineName)], blocks };
}

const decisionPlaces: Record<ApprovalDecider['via'], string> = { app: 'in Factory', github: 'on GitHub', linear: 'on Linear', jira: 'on Jira', telegram: 'on Telegram' };

/**
 * The run's latest recorded decision, "Approved by @alice on GitHub: Ship it": the person and the
 * comment are outside text; a decision in the app reads "Approved in Factory".
 */
function latestDecision(run: Readonly<Run>): CommentInline[] | undefined {
  const decided = lastDecidedStep(run);
  const approval = decided?.approval;
  if (!approval?.by) return undefined;
  const parts: CommentInline[] = [{ kind: 'words', text: approval.approved ? 'Approved' : 'Rejected' }];
  if (approval.by.via !== 'app') parts.push({ kind: 'words', text: ' by ' }, { kind: 'outside', text: approval.by.name });
  parts.push({ kind: 'words', text: ` ${decisionPlaces[approval.by.via] ?? ''}` });
  const step = run.pipeline?.steps.find((candidate) => candidate.id === decided!.id);
  const chosen = step?.kind === 'approval' ? selectedLabels(step, approval.selected) : [];
  if (chosen.length) parts.push({ kind: 'words', text: ', choosing ' }, { kind: 'outside', text: chosen.join(', ') });
  if (approval.comment) parts.push({ kind: 'words', text: ': ' }, { kind: 'outside', text: cut(approval.comment, messageLimit) });
  return parts;
}

/** The step whose approval was decided last, by someone the run recorded (`approval.by`). */
export function lastDecidedStep(run: Readonly<Run>): StepRun | undefined {
  let latest: StepRun | undefined;
  for (const step of run.steps) if (step.approval?.by && (!latest || step.approval.at >= latest.approval!.at)) latest = step;
  return latest;
}

function cut(text: string, limit: number): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= limit ? line : `${line.slice(0, limit - 1)}…`;
}
