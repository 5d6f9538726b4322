// Approvals decided from the issue's own comments (issue 26): `/approve`, `/approve 2`,
// `/approve 1,3` or `/reject` as a comment's first line (comment-commands.ts) on an issue whose run
// waits for an approval decides it through RunService.approveStep, as the app does.
//
// A command arrives by the trigger's webhook (a signed comment event; an unsigned one only says
// which issue to look at, and its comments are read from the service) or by its poll, which asks
// only about the issues whose run waits, one cheap request each. The rules:
// - Only people allowed: the trigger's `approvers` when it names some, else each tracker's default
//   (command-source.ts: GitHub write access, Linear members, Jira reporter and assignee). Comments of
//   the connection's own account never count. Everything refused is written in the ledger.
// - First answer wins: approveStep changes the step before it awaits anything, so of two answers
//   (the app, a comment, a button) exactly one decides; the other is told who decided.
// - A comment is taken once: just before approveStep its id and step are written down as under
//   way (`commandsUnderWay`), and once approveStep resolved as taken (`commands`), both durably in
//   the trigger's file. A replayed event or a poll that sees it again decides nothing; after a
//   restart, a comment under way whose step still waits is taken then, and one whose step no longer
//   waits counts as taken (never deciding the run's next approval with the same comment).
// - Feedback stays in the run's one comment (write-back): the decision ("Approved by @alice"), or
//   why the last command could not be taken; never a reply of its own.

import type { ApprovalDecider, Connection, LedgerEntry, Run, StepRun, TriggerConfig, TriggerKind } from '../core/api';
import { ConflictError, ValidationError, errorMessage } from '../core/errors';
import type { RunService } from '../engine/runs';
import { ignoredAnswer, oneAtATime, type DeliveryAnswer } from './admission';
import { defaultCommandPrefix, readCommand } from './comment-commands';
import type { CommentInline } from './comment-text';
import type { CommandSource, CommentAuthor, CommentEvent, IssueComment } from './command-source';
import { ProviderError, type IncomingWebhook, type WriteBackTarget } from './provider';
import { githubCommands } from './providers/github-commands';
import { jiraCommands } from './providers/jira-commands';
import { linearCommands } from './providers/linear-commands';
import type { TriggerStates } from './trigger-state';
import { lastDecidedStep } from './write-back';

/** The comments of each tracker kind. */
const commandSources: Partial<Record<TriggerKind, CommandSource>> = { github: githubCommands, linear: linearCommands, jira: jiraCommands };

/** An unsigned comment event reads a run's comments at most this often. */
const unsignedCheckMs = 10_000;
/** Comments older than the wait by more than this still count (the tracker's clock and ours differ). */
const clockMarginMs = 120_000;

interface ApprovalCommandsOptions {
  states: TriggerStates;
  runs: Pick<RunService, 'allRuns' | 'getRun' | 'approveStep'>;
  connection: (id: string | undefined) => Connection | undefined;
  /** Shows a notice about a command on the run's one comment (WriteBack.notice). */
  notice: (run: Readonly<Run>, notice: CommentInline[]) => void;
  sources?: Partial<Record<TriggerKind, CommandSource>>;
  now: () => number;
}

/** What became of one command comment: the ledger's words, and whether it decided. */
interface Outcome {
  decision: string;
  runId?: string;
  decided?: boolean;
}

export class ApprovalCommands {
  /** When an unsigned comment event last made the comments of a run be read, by run id. */
  private readonly unsignedChecks = new Map<string, number>();

  constructor(private readonly options: ApprovalCommandsOptions) {}

  private source(trigger: TriggerConfig): CommandSource | undefined {
    return (this.options.sources ?? commandSources)[trigger.kind];
  }

  /**
   * A verified delivery that may carry a command comment: undefined when it is no comment event of
   * a tracker with commands, or its comment is no command (the provider's verdict stands then).
   */
  fromWebhook(trigger: TriggerConfig, webhook: IncomingWebhook): Promise<DeliveryAnswer> | undefined {
    const source = this.source(trigger);
    const event = source?.readWebhook(webhook, trigger);
    if (!source || !event || readCommand(event.comment.body, trigger.commandPrefix ?? defaultCommandPrefix).kind === 'none') return undefined;
    return this.receive(trigger, source, event);
  }

  private async receive(trigger: TriggerConfig, source: CommandSource, event: CommentEvent): Promise<DeliveryAnswer> {
    const run = this.latestRun(trigger, event);
    const key = run?.issue?.key ?? event.issueKey ?? event.issueId ?? '';
    const record = (outcome: Outcome) => this.record(trigger, 'webhook', key, outcome);
    if (!run) {
      record({ decision: `ignored: a command in comment ${event.comment.id}, but no run of this trigger is on ${key}: nothing waiting` });
      return ignoredAnswer;
    }
    try {
      if (!trigger.webhookSecret) {
        // Nothing proved the body is the service's: it only says which issue to look at, at most
        // once per `unsignedCheckMs` per run, so forged deliveries cannot spend the rate limit.
        const last = this.unsignedChecks.get(run.id) ?? -Infinity;
        if (this.options.now() - last < unsignedCheckMs) {
          record({ decision: 'dropped: an unsigned comment event came right after another; the next poll reads the comments (set a webhook secret)', runId: run.id });
          return ignoredAnswer;
        }
        this.unsignedChecks.set(run.id, this.options.now());
        if (this.unsignedChecks.size > 1000) this.unsignedChecks.delete(this.unsignedChecks.keys().next().value!);
        const taken = await this.checkRun(trigger, source, run);
        return taken ? { status: 200, body: { decided: true } } : ignoredAnswer;
      }
      const outcome = await this.take(trigger, source, run, event.comment, 'webhook');
      if (outcome) record(outcome);
      return outcome?.decided ? { status: 200, body: { decided: true } } : ignoredAnswer;
    } catch (error) {
      record({ decision: `error: ${errorMessage(error)}`, runId: run.id });
      return { status: 400, body: { error: 'the provider refused; see the trigger' } };
    }
  }

  /**
   * After a poll of `trigger`: the comments made on each issue whose run waits since it began to
   * wait, taken in order. A failure is written in the ledger (the next poll asks again); a rate
   * limit is thrown, so the poller pauses.
   */
  async poll(trigger: TriggerConfig, signal?: AbortSignal): Promise<void> {
    const source = this.source(trigger);
    if (!source || !this.options.connection(trigger.connectionId)) return;
    for (const run of this.waitingRuns(trigger)) {
      if (signal?.aborted) return;
      try {
        await this.checkRun(trigger, source, run, signal);
      } catch (error) {
        if (signal?.aborted) return;
        if (error instanceof ProviderError && error.retryAt !== undefined) throw error;
        this.record(trigger, 'poll', run.issue?.key ?? '', { decision: `reading the comments failed: ${errorMessage(error)}`, runId: run.id });
      }
    }
  }

  /** Reads the comments on `run`'s issue since it began to wait and takes the commands among them; true when one decided. */
  private async checkRun(trigger: TriggerConfig, source: CommandSource, slim: Run, signal?: AbortSignal): Promise<boolean> {
    const run = await this.options.runs.getRun(slim.id);
    const waiting = run && waitingStep(run);
    const connection = this.options.connection(trigger.connectionId);
    if (!run?.issue || !waiting || !connection) return false;
    const since = new Date((waiting.startedAt ?? run.createdAt) - clockMarginMs).toISOString();
    const comments = await source.commentsSince({ connection, trigger, issue: run.issue }, since, signal);
    let decided = false;
    for (const comment of comments) {
      if (signal?.aborted) break;
      const outcome = await this.take(trigger, source, run, comment, 'poll');
      if (outcome) this.record(trigger, 'poll', run.issue.key ?? '', outcome);
      decided ||= outcome?.decided === true;
    }
    return decided;
  }

  /**
   * Takes one comment on `slim`'s issue, once (one comment at a time per issue): undefined when it
   * is no command, or one already taken seen by a poll.
   */
  private take(trigger: TriggerConfig, source: CommandSource, slim: Run, comment: IssueComment, via: LedgerEntry['source']): Promise<Outcome | undefined> {
    const entry = this.options.states.entry(trigger.id);
    const { states } = this.options;
    return oneAtATime(entry, `commands ${slim.issue?.key ?? slim.id}`, async () => {
      if (Object.hasOwn(entry.file.commands, comment.id)) return via === 'poll' ? undefined : { decision: `already taken: comment ${comment.id} was decided before` };
      const reading = readCommand(comment.body, trigger.commandPrefix ?? defaultCommandPrefix);
      if (reading.kind === 'none') return undefined;
      const taken = async (outcome: Outcome): Promise<Outcome> => {
        delete entry.file.commandsUnderWay[comment.id];
        states.rememberCommand(entry, comment.id);
        await states.persist(trigger.id);
        return outcome;
      };
      // Under way when Factory stopped: taken already if its step no longer waits.
      const underWay = entry.file.commandsUnderWay[comment.id];
      if (typeof underWay === 'string') {
        const [runId, stepId] = underWay.split(' ');
        const step = (await this.options.runs.getRun(runId))?.steps.find((candidate) => candidate.id === stepId);
        if (step?.status !== 'waiting') return taken({ decision: `taken before a restart: comment ${comment.id} was deciding step \`${stepId}\`, which no longer waits`, ...(runId ? { runId } : {}) });
      }
      const intend = async (runId: string, stepId: string) => {
        entry.file.commandsUnderWay[comment.id] = `${runId} ${stepId}`;
        await states.persist(trigger.id);
      };
      return taken(await this.decide(trigger, source, slim, comment, reading, intend));
    });
  }

  /** Decides one command; `intend` is written down (durably) just before approveStep is asked. */
  private async decide(trigger: TriggerConfig, source: CommandSource, slim: Run, comment: IssueComment, reading: Exclude<ReturnType<typeof readCommand>, { kind: 'none' }>, intend: (runId: string, stepId: string) => Promise<void>): Promise<Outcome> {
    const runId = slim.id;
    const connection = this.options.connection(trigger.connectionId);
    const run = await this.options.runs.getRun(slim.id);
    if (!connection || !run?.issue) return { decision: 'ignored: the trigger or its run is gone', runId };
    const target: WriteBackTarget = { connection, trigger, issue: run.issue };
    const given = comment.author;
    if (!given) return { decision: `ignored: comment ${comment.id} names no author`, runId };
    if (await source.isOwnAccount(connection, given)) return { decision: `ignored: comment ${comment.id} is by Factory's own account (${given.name})`, runId };
    const author = source.complete ? await source.complete(connection, given) : given;
    const tell = (why: CommentInline[], decision: string): Outcome => {
      this.options.notice(run, [{ kind: 'words', text: 'Not taken: ' }, { kind: 'outside', text: reading.line }, { kind: 'words', text: ' by ' }, { kind: 'outside', text: author.name }, { kind: 'words', text: ' — ' }, ...why]);
      return { decision, runId };
    };
    const refusal = await this.refusal(trigger, source, target, author);
    if (refusal) return tell([{ kind: 'words', text: `${author.name} ${refusal}` }], `ignored: ${author.name} ${refusal}`);
    if (reading.kind === 'refused') return tell([{ kind: 'words', text: reading.reason }], `refused: ${reading.line} by ${author.name}: ${reading.reason}`);
    const step = waitingStep(run);
    if (!step) {
      const by = lastDecidedStep(run)?.approval?.by;
      const already = by ? ` (already decided by ${by.name} via ${by.via})` : '';
      return tell([{ kind: 'words', text: `nothing is waiting for approval on this run (it is ${run.status})${already}` }], `nothing waiting: ${run.id} is ${run.status}${already}; ${reading.line} by ${author.name} not taken`);
    }
    const by: ApprovalDecider = { name: author.name, via: source.via };
    try {
      await intend(run.id, step.id);
      await this.options.runs.approveStep(run.id, step.id, reading.approved, reading.comment || undefined, reading.approved ? reading.selected : undefined, by);
    } catch (error) {
      if (error instanceof ValidationError) return tell([{ kind: 'outside', text: error.message }], `not decided: ${error.message}`);
      if (error instanceof ConflictError) {
        const winner = lastDecidedStep((await this.options.runs.getRun(run.id)) ?? run)?.approval?.by;
        const already = winner ? `already decided by ${winner.name} via ${winner.via}` : error.message;
        return tell([{ kind: 'words', text: already }], `not taken: ${already}`);
      }
      throw error;
    }
    return { decision: `${reading.approved ? 'approved' : 'rejected'} step \`${step.id}\` by ${author.name} (comment ${comment.id})`, runId, decided: true };
  }

  /** Why `author` may not decide on the issue, or undefined when they may. */
  private async refusal(trigger: TriggerConfig, source: CommandSource, target: WriteBackTarget, author: CommentAuthor): Promise<string | undefined> {
    const approvers = trigger.approvers ?? [];
    if (approvers.length === 0) return source.mayDecide(target, author);
    const named = approvers.some((approver) => author.handles.some((handle) => handle.toLowerCase() === approver.replace(/^@/, '').toLowerCase()));
    return named ? undefined : 'is not among the approvers of this trigger';
  }

  /** The latest run of the trigger on the event's issue (by key, or by the service's issue id). */
  private latestRun(trigger: TriggerConfig, event: CommentEvent): Run | undefined {
    let latest: Run | undefined;
    for (const run of this.options.runs.allRuns()) {
      if (run.triggerId !== trigger.id || !run.issue || run.followUp) continue;
      const same = (event.issueKey !== undefined && run.issue.key?.toLowerCase() === event.issueKey.toLowerCase()) || (event.issueId !== undefined && run.issue.raw?.id === event.issueId);
      if (same && (!latest || run.createdAt >= latest.createdAt)) latest = run;
    }
    return latest;
  }

  /** The trigger's runs that wait for a decision now. */
  private *waitingRuns(trigger: TriggerConfig): Iterable<Run> {
    for (const run of this.options.runs.allRuns()) if (run.triggerId === trigger.id && run.status === 'waiting' && run.issue && !run.followUp) yield run;
  }

  private record(trigger: TriggerConfig, source: LedgerEntry['source'], key: string, outcome: Outcome): void {
    this.options.states.record(trigger.id, { at: this.options.now(), source, key, decision: outcome.decision, ...(outcome.runId ? { runId: outcome.runId } : {}) });
  }
}

/** The step of `run` waiting for a decision, if any. */
function waitingStep(run: Run): StepRun | undefined {
  return run.status === 'waiting' ? run.steps.find((step) => step.status === 'waiting') : undefined;
}
