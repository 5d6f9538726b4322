// Factory as a Linear agent (issue 27, PROVIDERS §8): a 'linear' trigger with `agent: true` starts
// its pipeline when an issue is delegated to the app or the app is mentioned (`AgentSessionEvent`
// created), and the agent session in Linear shows the run:
//   created      → a `thought` saying what Factory is about to do, posted at once (Linear marks an
//                  agent unresponsive after 10 s), then the run is queued; the session's external
//                  link points at the run page when remote access has an address
//   step start   → an `action` (the step's name, what it runs); step end → an `action` with its result
//   step waits   → an `elicitation` (with the `select` signal and the options for a step with choices)
//   run ends     → a `response` (outcome, pull request, run link), or an `error`
//   long step    → at most one ephemeral progress `thought` a minute, on its output (never the output itself)
//   prompted     → decides a waiting approval (approveStep, first answer wins), is guidance for the
//                  next agent step while the run works, or (signal `stop`) cancels the run
//
// Restart-safe: each session's record (sessions/activities/prompts) is on disk before anything it
// leads to: the session id before its run is queued (a redelivered `created` starts nothing), a
// prompt's id before it decides, an activity (with the UUID Linear keeps it under) before it is
// sent, and marked sent after. A crash between sending and marking sends the same id again, which
// Linear treats as the same activity; an activity marked sent is never sent again.

import { randomUUID } from 'node:crypto';
import type { ApprovalStep, Connection, Pipeline, Run, StepRun, TriggerConfig } from '../core/api';
import { ConflictError, FactoryError, errorMessage, quote } from '../core/errors';
import { formatDuration, isFinished } from '../core/runs';
import { setTimer } from '../core/timers';
import { isRecord } from '../core/validate';
import type { RunLifecycleEvent, RunService, RunStepEvent } from '../engine/runs';
import type { DataStore } from '../store/data-store';
import type { DeliveryAnswer } from './admission';
import { pullRequestLink } from './github-pulls';
import { ProviderError, webhookJson, type IncomingWebhook } from './provider';
import { signedAgeProblem } from './providers/linear';
import { createAgentActivity, linkAgentSession, readAgentSessionEvent, workspaceOf, type AgentActivityContent, type AgentActivityInput, type AgentSessionEvent } from './providers/linear-agent';
import type { TriggerStates } from './trigger-state';

/** A long step tells its session how it is doing at most this often. */
export const progressIntervalMs = 60_000;
/** Waits before the 2nd, 3rd, ... try of an activity Linear did not take. */
export const defaultActivityRetryDelaysMs: readonly number[] = [2_000, 15_000, 60_000, 300_000];
/** Characters of a command, message or error quoted in an activity. */
const quoteLimit = 300;
/** Sessions whose run ended this long ago are forgotten (their prompts would find no run to decide). */
const sessionKeepMs = 30 * 24 * 3600_000;
/** Prompt ids remembered per session. */
const promptLimit = 200;

const approveWords = new Set(['approve', 'approved', 'yes', 'y', 'ok', 'okay', 'lgtm', 'go', 'continue', '👍']);
const rejectWords = new Set(['reject', 'rejected', 'no', 'n', 'deny', 'decline', '👎']);

/** An activity to post (or the session's link to set), recorded before it is sent. */
interface PlannedActivity {
  /** What it reports (`start:build:1`, `final`): an event seen again plans nothing. */
  key: string;
  /** The UUID v4 Linear keeps it under. */
  id: string;
  sent?: true;
  /** Until sent: what to post; a session update carries `link` instead. */
  content?: AgentActivityContent;
  signal?: AgentActivityInput['signal'];
  signalMetadata?: Record<string, unknown>;
  ephemeral?: true;
  link?: string;
}

interface SessionRecord {
  triggerId: string;
  runId?: string;
  at: number;
  activities: PlannedActivity[];
  /** Ids of the `prompted` activities handled: a redelivery does nothing. */
  prompts: string[];
  /** Guidance from Linear for the next agent step; `stepId` once a step took it. */
  guidance: { text: string; stepId?: string }[];
  /** Linear asked to stop: the end says so. */
  stopped?: true;
}

/** A person's answer to a waiting step, read from their words in Linear. */
export interface ApprovalAnswer {
  approved: boolean;
  comment?: string;
  /** Option ids ("1", "2", ...). */
  selected?: string[];
}

/**
 * How a `prompted` text decides a waiting step: for a step with choices, an option's value ("2")
 * or label (any case; several separated by commas for a multiple choice) approves with those; a
 * first word `approve`/`yes`/`ok`/`lgtm`… approves and `reject`/`no`/`deny`… rejects, the rest of
 * the text being the comment. Any other text decides nothing (undefined): a question is not a
 * verdict, so Factory asks again (DECISIONS "Triggers").
 */
export function readApprovalAnswer(body: string, step: ApprovalStep | undefined): ApprovalAnswer | undefined {
  const words = body.trim();
  if (!words) return undefined;
  const options = step?.choices?.options ?? [];
  if (options.length > 0) {
    const parts = words.split(/\s*[,\n]\s*/).filter(Boolean);
    const ids = parts.map((part) => {
      const index = options.findIndex((label, at) => part === String(at + 1) || part.toLowerCase() === label.toLowerCase());
      return index >= 0 ? String(index + 1) : undefined;
    });
    if (ids.every((id) => id !== undefined) && (step!.choices!.mode === 'multiple' || ids.length === 1)) return { approved: true, selected: [...new Set(ids as string[])] };
  }
  const [, first = '', rest = ''] = /^(\S+?)[\s.!:,;-]*(?:\s+([\s\S]*))?$/u.exec(words) ?? [];
  const word = first.toLowerCase().replace(/[.!:,;-]+$/, '');
  const comment = rest.trim() ? { comment: rest.trim() } : {};
  if (approveWords.has(word)) return { approved: true, ...comment };
  if (rejectWords.has(word)) return { approved: false, ...comment };
  return undefined;
}

export interface LinearAgentOptions {
  store: Pick<DataStore, 'readAgentSessions' | 'writeAgentSessions'>;
  /** The triggers' ledgers. */
  states: TriggerStates;
  runs: Pick<RunService, 'queueRun' | 'approveStep' | 'cancelRun' | 'getRun' | 'allRuns' | 'logRunNote' | 'onLifecycle' | 'onStep' | 'setGuidanceSource'>;
  pipeline: (id: string) => Pipeline | undefined;
  connection: (id: string | undefined) => Connection | undefined;
  trigger: (id: string) => TriggerConfig | undefined;
  runUrl: (runId: string) => string | undefined;
  now: () => number;
  retryDelaysMs?: readonly number[];
  /** Runs a call with the account's token fresh (an app installation refreshes it: linear-oauth.ts); default: as it is. */
  withFreshToken?: <T>(connection: Connection, call: (fresh: Connection) => Promise<T>) => Promise<T>;
}

export class LinearAgentSessions {
  private sessions: Record<string, SessionRecord> = Object.create(null);
  private readonly sessionOfRun = new Map<string, string>();
  /** Sending under way, by session: one at a time, in order. */
  private readonly sending = new Map<string, Promise<void>>();
  /** When each session last told Linear about its running step, and that step's output lines since. */
  private readonly progress = new Map<string, { at: number; lines: number }>();
  /** Workspace ids by connection (id and token): asked once. */
  private readonly workspaces = new Map<string, Promise<string>>();
  /** Cancellations Linear asked for, under way. */
  private readonly cancelling = new Set<Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  /** Activities Linear did not take after every retry: left unsent until the next start. */
  private readonly refused = new Set<string>();
  private stopped = false;

  constructor(private readonly options: LinearAgentOptions) {}

  /**
   * Reads the sessions back, finds runs queued just before a crash recorded them, subscribes to the
   * runs, and posts what the sessions missed (an end, a question) or had not finished sending.
   */
  async open(events?: { on(event: 'logs', listener: (lines: { runId: string; stepId: string; stream?: string }[]) => void): unknown }): Promise<void> {
    const { runs } = this.options;
    const raw = await this.options.store.readAgentSessions().catch((error: unknown) => {
      console.warn(`Linear agent sessions: ${errorMessage(error)}; starting without them`);
      return undefined;
    });
    if (isRecord(raw) && isRecord(raw.sessions)) this.sessions = Object.assign(Object.create(null), raw.sessions) as Record<string, SessionRecord>;
    const byId = new Map<string, Run>();
    for (const run of runs.allRuns()) {
      byId.set(run.id, run);
      const session = run.agentSessionId ? this.sessions[run.agentSessionId] : undefined;
      if (session && !session.runId) session.runId = run.id;
    }
    for (const [sessionId, session] of Object.entries(this.sessions)) {
      const run = session.runId ? byId.get(session.runId) : undefined;
      if ((!run && session.at < this.options.now() - sessionKeepMs) || (run && isFinished(run.status) && (run.finishedAt ?? 0) < this.options.now() - sessionKeepMs)) {
        delete this.sessions[sessionId];
        continue;
      }
      if (session.runId) this.sessionOfRun.set(session.runId, sessionId);
    }
    runs.onLifecycle((event) => this.runEvent(event));
    runs.onStep((event) => this.stepEvent(event));
    runs.setGuidanceSource((run, stepId) => this.guidanceFor(run, stepId));
    events?.on('logs', (lines) => this.output(lines));
    for (const [sessionId, session] of Object.entries(this.sessions)) {
      const slim = session.runId ? byId.get(session.runId) : undefined;
      if (slim && (isFinished(slim.status) || slim.status === 'waiting')) {
        const run = await runs.getRun(slim.id).catch(() => undefined);
        if (run && isFinished(run.status)) this.planEnd(sessionId, run);
        const waiting = run?.status === 'waiting' ? run.steps.find((step) => step.status === 'waiting') : undefined;
        if (run && waiting) this.planQuestion(sessionId, run, waiting);
      }
      this.send(sessionId);
    }
  }

  // ─── Deliveries ───

  /** Handles a signed delivery of an agent trigger (its signature already checked). */
  async receive(trigger: TriggerConfig, webhook: IncomingWebhook): Promise<DeliveryAnswer> {
    const record = (decision: string, key?: string, runId?: string) => this.options.states.record(trigger.id, { at: this.options.now(), source: 'webhook', ...(key ? { key } : {}), decision, ...(runId ? { runId } : {}) });
    if (!trigger.webhookSecret) {
      record('refused: agent session events must be signed: set the webhook signing secret Linear shows for this webhook');
      return { status: 401, body: { error: 'invalid signature' } };
    }
    const parsed = webhookJson(webhook.body.toString('utf8'));
    if ('verdict' in parsed) {
      record(`invalid: ${parsed.verdict.kind === 'invalid' ? parsed.verdict.reason : 'not JSON'}`);
      return { status: 400, body: { error: 'the body is not JSON' } };
    }
    const stale = isRecord(parsed.payload) ? signedAgeProblem(parsed.payload, webhook.receivedAt) : 'not a Linear webhook';
    if (stale) {
      record(stale);
      return { status: 401, body: { error: 'invalid signature' } };
    }
    const event = readAgentSessionEvent(parsed.payload);
    if (typeof event === 'string') {
      const type = isRecord(parsed.payload) ? String(parsed.payload.type).slice(0, 40) : '';
      if (type && type !== 'AgentSessionEvent') {
        record(`ignored: ${type} event (an agent trigger takes agent session events only)`);
        return { status: 202, body: { ignored: true } };
      }
      record(`invalid: ${event}`);
      return { status: 400, body: { error: event } };
    }
    const connection = this.options.connection(trigger.connectionId);
    if (!connection) {
      record('ignored: the trigger has no account');
      return { status: 202, body: { ignored: true } };
    }
    const foreign = await this.foreignProblem(event, connection).catch((error: unknown) => `error: Factory could not check the session's workspace: ${errorMessage(error)}`);
    if (foreign) {
      record(foreign, event.issue?.key);
      return { status: 400, body: { error: foreign.replace(/^refused: /, '') } };
    }
    return event.action === 'created' ? this.created(trigger, event, record) : this.prompted(trigger, event, record);
  }

  /** Why a session is not this account's (another workspace, another app), or undefined. */
  private async foreignProblem(event: AgentSessionEvent, connection: Connection): Promise<string | undefined> {
    const cacheKey = `${connection.id} ${connection.token}`;
    let workspace = this.workspaces.get(cacheKey);
    if (!workspace) {
      workspace = this.fresh(connection, workspaceOf);
      this.workspaces.set(cacheKey, workspace);
      workspace.catch(() => this.workspaces.delete(cacheKey));
    }
    const own = await workspace;
    if (event.organizationId !== own) return `refused: the session belongs to another Linear workspace (${quote(event.organizationId)}), not the one of the account ${quote(connection.name)}`;
    // An app installation (OAuth, actor=app) is known by its client id, and acts as its app user.
    const { oauth } = connection;
    if (oauth?.clientId && event.oauthClientId && event.oauthClientId !== oauth.clientId) return `refused: the session belongs to another Linear app (client ${quote(event.oauthClientId)}), not the one installed as ${quote(connection.name)}`;
    if (oauth?.clientId && connection.account?.id && event.appUserId && event.appUserId !== connection.account.id) return `refused: the session is another app user's (${quote(event.appUserId)}), not ${quote(connection.account.name)}'s`;
    return undefined;
  }

  /** A session began: recorded (durably) before its run is queued; the first thought goes out at once. */
  private async created(trigger: TriggerConfig, event: AgentSessionEvent, record: (decision: string, key?: string, runId?: string) => void): Promise<DeliveryAnswer> {
    const { sessionId, issue } = event;
    const known = this.sessions[sessionId];
    if (known) {
      record(`already processed: agent session ${sessionId} started ${known.runId ?? 'a run'} before`, issue?.key, known.runId);
      return { status: 200, body: { issue: issue?.key ?? null, created: false } };
    }
    if (!issue) {
      record(`ignored: agent session ${sessionId} has no issue`);
      return { status: 202, body: { ignored: true } };
    }
    const pipeline = this.options.pipeline(trigger.pipelineId);
    const session: SessionRecord = { triggerId: trigger.id, at: this.options.now(), activities: [], prompts: [], guidance: [] };
    this.sessions[sessionId] = session;
    const steps = pipeline ? pipeline.steps.map((step) => step.name).join(' → ') : '';
    this.plan(sessionId, 'thought:start', { type: 'thought', body: `Starting the pipeline **${pipeline?.name ?? trigger.pipelineId}** on ${issue.key}${steps ? `: ${steps}` : ''}.` });
    try {
      await this.save();
      const runId = await this.options.runs.queueRun({ pipelineId: trigger.pipelineId, issue, variables: trigger.variables ?? {} }, { triggerId: trigger.id, agentSessionId: sessionId });
      session.runId = runId;
      this.sessionOfRun.set(runId, sessionId);
      const url = this.options.runUrl(runId);
      if (url) this.plan(sessionId, 'link', undefined, { link: url });
      record(`started ${runId} for agent session ${sessionId}`, issue.key, runId);
      return { status: 201, body: { issue: issue.key, created: true } };
    } catch (error) {
      const message = errorMessage(error);
      this.plan(sessionId, 'final', { type: 'error', body: `Factory could not start the run: ${cut(message)}` });
      record(`error: ${message}`, issue.key);
      return { status: 400, body: { error: message } };
    } finally {
      this.send(sessionId);
    }
  }

  /** A person wrote in the session (or pressed stop): a decision, guidance, or a cancel. */
  private async prompted(trigger: TriggerConfig, event: AgentSessionEvent, record: (decision: string, key?: string, runId?: string) => void): Promise<DeliveryAnswer> {
    const activity = event.activity!;
    const session = this.sessions[event.sessionId];
    if (!session) {
      record(`ignored: a prompt in agent session ${event.sessionId}, which Factory did not start`);
      return { status: 202, body: { ignored: true } };
    }
    const key = event.issue?.key;
    const runId = session.runId;
    if (session.prompts.includes(activity.id)) {
      record(`already processed: prompt ${activity.id}`, key, runId);
      return { status: 200, body: { created: false } };
    }
    session.prompts = [...session.prompts, activity.id].slice(-promptLimit);
    await this.save(); // a redelivery of this prompt, even after a crash, decides nothing again
    const name = activity.userName ?? activity.userEmail ?? 'someone in Linear';
    const allowed = !trigger.approvers?.length || trigger.approvers.some((who) => [activity.userId, activity.userEmail].some((value) => value !== undefined && value.toLowerCase() === who.toLowerCase()));
    const run = runId ? await this.options.runs.getRun(runId).catch(() => undefined) : undefined;
    if (!allowed) {
      this.plan(event.sessionId, `prompt:${activity.id}`, { type: 'thought', body: `${name} is not among the trigger's approvers, so Factory did not act on this.` });
      record(`ignored: ${name} is not among the approvers`, key, runId);
    } else if (!run) {
      this.plan(event.sessionId, `prompt:${activity.id}`, { type: 'thought', body: 'The run of this session no longer exists.' });
      record('ignored: a prompt for a run that no longer exists', key);
    } else if (activity.signal === 'stop') {
      if (!isFinished(run.status)) {
        session.stopped = true;
        const cancel = this.options.runs.cancelRun(run.id).catch((error: unknown) => {
          if (!(error instanceof ConflictError)) console.error(`Stopping ${run.id} for Linear failed: ${errorMessage(error)}`);
        });
        this.cancelling.add(cancel);
        void cancel.finally(() => this.cancelling.delete(cancel));
        record(`stop from ${name}: cancelling ${run.id}`, key, run.id);
      } else {
        this.plan(event.sessionId, `prompt:${activity.id}`, { type: 'response', body: `The run had already ended (${run.status}).` });
        record(`ignored: stop for a run already ${run.status}`, key, run.id);
      }
    } else if (run.status === 'waiting') {
      await this.answer(event.sessionId, run, activity, name, record, key);
    } else if (!isFinished(run.status)) {
      this.guide(event.sessionId, session, run, activity, name);
      record(`guidance from ${name}`, key, run.id);
    } else {
      this.plan(event.sessionId, `prompt:${activity.id}`, { type: 'response', body: `This run has ended (${run.status}); delegate the issue again for a new run.` });
      record(`ignored: a prompt for a run already ${run.status}`, key, run.id);
    }
    await this.save();
    this.send(event.sessionId);
    return { status: 200, body: { ok: true } };
  }

  /** Decides the waiting step with the person's answer; a text that is no answer is asked again. */
  private async answer(sessionId: string, run: Run, activity: NonNullable<AgentSessionEvent['activity']>, name: string, record: (decision: string, key?: string, runId?: string) => void, key: string | undefined): Promise<void> {
    const stepRun = run.steps.find((step) => step.status === 'waiting');
    const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun?.id);
    if (!stepRun) return;
    const answer = readApprovalAnswer(activity.body, step?.kind === 'approval' ? step : undefined);
    const askAgain = (why: string) => {
      this.options.runs.logRunNote(run.id, `Linear: ${name} wrote “${cut(activity.body)}” on the waiting step ${stepRun.id}; it decides nothing`);
      this.plan(sessionId, `prompt:${activity.id}`, { type: 'elicitation', body: `${why} ${answerHelp(step?.kind === 'approval' ? step : undefined)}` }, choiceSignal(step));
      record(`not an answer from ${name}: asked again`, key, run.id);
    };
    if (!answer) return askAgain(`Factory did not read “${cut(activity.body, 80)}” as a decision.`);
    try {
      await this.options.runs.approveStep(run.id, stepRun.id, answer.approved, answer.comment, answer.selected, { name, via: 'linear' });
      record(`${answer.approved ? 'approved' : 'rejected'} ${stepRun.id} by ${name}`, key, run.id);
    } catch (error) {
      if (error instanceof ConflictError) {
        const decided = (await this.options.runs.getRun(run.id).catch(() => undefined))?.steps.find((step) => step.id === stepRun.id)?.approval?.by;
        this.plan(sessionId, `prompt:${activity.id}`, { type: 'thought', body: `Already decided${decided ? ` by ${decided.name} via ${decided.via}` : ''}: this answer changed nothing.` });
        record(`too late: ${stepRun.id} was already decided`, key, run.id);
      } else if (error instanceof FactoryError) askAgain(`${error.message}.`);
      else throw error;
    }
  }

  /** Text while the run works: guidance for the next agent step, else a note in the run's log. */
  private guide(sessionId: string, session: SessionRecord, run: Run, activity: NonNullable<AgentSessionEvent['activity']>, name: string): void {
    const current = run.steps.findIndex((step) => step.status === 'running' || step.status === 'pending');
    const nextAgent = run.steps.slice(current < 0 ? run.steps.length : current).find((step) => step.kind === 'agent' && step.status === 'pending');
    if (nextAgent) {
      session.guidance.push({ text: `${name}: ${activity.body}` });
      this.options.runs.logRunNote(run.id, `Linear: guidance from ${name} for the next agent step (${nextAgent.id})`);
      this.plan(sessionId, `prompt:${activity.id}`, { type: 'thought', body: `Noted: the next agent step, ${nextAgent.name}, gets this as guidance.` });
    } else {
      this.options.runs.logRunNote(run.id, `Linear: ${name} wrote “${cut(activity.body)}” (no agent step is left to take it)`);
      this.plan(sessionId, `prompt:${activity.id}`, { type: 'thought', body: 'Noted in the run\'s log: no agent step is left to take it as guidance.' });
    }
  }

  /** The guidance an agent step about to start takes (once per step; a retry of it takes the same). */
  private guidanceFor(run: Readonly<Run>, stepId: string): string | undefined {
    const session = run.agentSessionId ? this.sessions[run.agentSessionId] : undefined;
    if (!session) return undefined;
    const taken = session.guidance.filter((entry) => entry.stepId === undefined || entry.stepId === stepId);
    if (taken.length === 0) return undefined;
    if (taken.some((entry) => entry.stepId === undefined)) {
      for (const entry of taken) entry.stepId = stepId;
      void this.save().catch(() => undefined);
    }
    return `Guidance from Linear:\n${taken.map((entry) => entry.text).join('\n\n')}`;
  }

  // ─── What the session shows ───

  private runEvent(event: RunLifecycleEvent): void {
    const sessionId = event.run.agentSessionId;
    if (!sessionId || !this.sessions[sessionId]) return;
    if (event.type === 'step-waiting') this.planQuestion(sessionId, event.run, event.step);
    else if (event.type === 'finished') this.planEnd(sessionId, event.run);
    else return;
    this.send(sessionId);
  }

  private stepEvent(event: RunStepEvent): void {
    const { run, step } = event;
    const sessionId = run.agentSessionId;
    if (!sessionId || !this.sessions[sessionId]) return;
    if (event.type === 'step-started') {
      this.progress.set(sessionId, { at: this.options.now(), lines: 0 });
      if (step.kind === 'approval') return; // its question is the elicitation
      this.plan(sessionId, `start:${step.id}:${step.attempt}`, { type: 'action', action: step.name, parameter: whatStepRuns(run, step) });
    } else {
      this.progress.delete(sessionId);
      this.plan(sessionId, `end:${step.id}:${step.attempt}`, { type: 'action', action: step.name, parameter: whatStepRuns(run, step), result: this.outcomeLine(step) });
    }
    this.send(sessionId);
  }

  /** Output of running steps: at most one progress thought a minute per session, saying how long and how much. */
  private output(lines: readonly { runId: string; stepId: string; stream?: string }[]): void {
    const now = this.options.now();
    const touched = new Set<string>();
    for (const line of lines) {
      const sessionId = this.sessionOfRun.get(line.runId);
      const progress = sessionId ? this.progress.get(sessionId) : undefined;
      if (!sessionId || !progress || !line.stepId || line.stream === 'info') continue;
      progress.lines++;
      touched.add(sessionId);
    }
    for (const sessionId of touched) {
      const progress = this.progress.get(sessionId)!;
      if (now - progress.at < progressIntervalMs) continue;
      const run = [...this.options.runs.allRuns()].find((candidate) => candidate.id === this.sessions[sessionId]?.runId);
      const step = run?.steps.find((candidate) => candidate.status === 'running');
      if (!step) continue;
      progress.at = now;
      const lines = progress.lines;
      this.plan(sessionId, `progress:${step.id}:${step.attempt}:${now}`, { type: 'thought', body: `Still working on ${step.name} (${formatDuration(now - (step.startedAt ?? now))}, ${lines.toLocaleString('en-US')} line${lines === 1 ? '' : 's'} of output so far).` }, { ephemeral: true });
      this.send(sessionId);
    }
  }

  private planQuestion(sessionId: string, run: Readonly<Run>, stepRun: Readonly<StepRun>): void {
    const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
    const approval = step?.kind === 'approval' ? step : undefined;
    const budget = stepRun.budgetStop;
    const about = budget ? `The agent reached its ${budget.limit} budget (${budget.spent} of ${budget.allowed}): approve to let it go on, reject to stop.` : stepRun.message ?? (approval ? approval.message : '');
    // An agent step can wait more than once in one attempt (each cap it reaches): each wait is its own question.
    this.plan(sessionId, `ask:${stepRun.id}:${stepRun.attempt}${budget ? `:${budget.at}` : ''}`, { type: 'elicitation', body: `**${stepRun.name}** waits for a decision.\n\n${cut(about, 2000)}\n\n${answerHelp(approval)}` }, choiceSignal(step));
  }

  private planEnd(sessionId: string, run: Readonly<Run>): void {
    const session = this.sessions[sessionId]!;
    const url = this.options.runUrl(run.id);
    const pulls = run.steps.flatMap((stepRun) => {
      const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
      const connection = step?.kind === 'pullRequest' ? this.options.connection(step.connectionId) : undefined;
      const link = stepRun.pullRequest && connection?.kind === 'github' ? pullRequestLink(stepRun.pullRequest.url, connection) : undefined;
      return stepRun.pullRequest ? [link ? `[${stepRun.pullRequest.repository}#${stepRun.pullRequest.number}](${link})` : `${stepRun.pullRequest.repository}#${stepRun.pullRequest.number}`] : [];
    });
    const lines = [
      run.status === 'succeeded' ? `Done: **${run.pipelineName}** succeeded.`
        : run.status === 'cancelled' ? (session.stopped ? 'Stopped as asked: the run was cancelled.' : 'The run was cancelled.')
          : run.status === 'rejected' ? `Rejected: ${cut(run.error ?? 'a step was rejected')}`
            : `The run failed: ${cut(run.error === 'interrupted' ? 'Factory stopped while it ran' : run.error ?? 'unknown error')}`,
      ...pulls.map((pull) => `Pull request: ${pull}`),
      ...(url ? [`Run: ${url}`] : []),
    ];
    this.plan(sessionId, 'final', { type: run.status === 'failed' ? 'error' : 'response', body: lines.join('\n\n') });
  }

  private outcomeLine(step: Readonly<StepRun>): string {
    const took = step.startedAt !== undefined && step.finishedAt !== undefined ? ` in ${formatDuration(step.finishedAt - step.startedAt)}` : '';
    const by = step.approval?.by ? ` by ${step.approval.by.name}${step.approval.by.via === 'linear' ? '' : ` (via ${step.approval.by.via})`}` : '';
    const comment = step.approval?.comment ? `: ${cut(step.approval.comment, 120)}` : '';
    switch (step.status) {
      case 'succeeded':
        return step.kind === 'approval' ? `Approved${by}${comment}` : `Succeeded${took}`;
      case 'rejected':
        return `Rejected${by}${comment}`;
      case 'failed':
        return `Failed${took}: ${cut(step.error ?? (step.exitCode !== undefined ? `exit code ${step.exitCode}` : 'unknown error'), 200)}`;
      default:
        return `${step.status[0]!.toUpperCase()}${step.status.slice(1)}${took}`;
    }
  }

  // ─── Recording and sending ───

  /** Records an activity under `key` unless one was recorded under it before. */
  private plan(sessionId: string, key: string, content: AgentActivityContent | undefined, extra: Pick<PlannedActivity, 'signal' | 'signalMetadata' | 'ephemeral' | 'link'> = {}): void {
    const session = this.sessions[sessionId];
    if (!session || session.activities.some((activity) => activity.key === key)) return;
    session.activities.push({ key, id: randomUUID(), ...(content ? { content } : {}), ...extra });
  }

  /** Sends the session's unsent activities in order, each written down first; one sender per session. */
  private send(sessionId: string): void {
    if (this.sending.has(sessionId) || this.stopped) return;
    const work = this.sendAll(sessionId).catch((error: unknown) => console.error(`Linear agent session ${sessionId}: ${errorMessage(error)}`)).finally(() => {
      this.sending.delete(sessionId);
      const session = this.sessions[sessionId];
      if (!this.stopped && session?.activities.some((activity) => !activity.sent && !this.refused.has(activity.id))) this.send(sessionId);
    });
    this.sending.set(sessionId, work);
  }

  private async sendAll(sessionId: string): Promise<void> {
    const session = this.sessions[sessionId];
    const delays = this.options.retryDelaysMs ?? defaultActivityRetryDelaysMs;
    for (let next = session?.activities.find((activity) => !activity.sent && !this.refused.has(activity.id)); session && next && !this.stopped; next = session.activities.find((activity) => !activity.sent && !this.refused.has(activity.id))) {
      await this.save(); // what is about to be sent, with its id, is on disk first
      const connection = this.options.connection(this.options.trigger(session.triggerId)?.connectionId);
      for (let tries = 0; ; tries++) {
        try {
          if (!connection) throw new ProviderError('the trigger or its Linear account is gone');
          if (next.link) await this.fresh(connection, (current) => linkAgentSession(current, sessionId, next.link!));
          else await this.fresh(connection, (current) => createAgentActivity(current, { id: next.id, agentSessionId: sessionId, content: next.content!, ...(next.ephemeral ? { ephemeral: true } : {}), ...(next.signal ? { signal: next.signal } : {}), ...(next.signalMetadata ? { signalMetadata: next.signalMetadata } : {}) }));
          break;
        } catch (error) {
          const retryable = !(error instanceof ProviderError) || error.retryable || error.retryAt !== undefined;
          if (!retryable || tries >= delays.length || this.stopped) {
            // Left unsent: tried again at the next start.
            this.refused.add(next.id);
            this.note(session, `Linear did not take the session's ${next.key.split(':')[0]} activity: ${errorMessage(error)}`);
            return;
          }
          const retryAt = error instanceof ProviderError ? error.retryAt : undefined;
          await this.wait(retryAt !== undefined ? Math.max(retryAt - Date.now(), delays[tries]!) : delays[tries]!);
        }
      }
      next.sent = true;
      delete next.content;
      delete next.signalMetadata;
    }
    await this.save();
  }

  private fresh<T>(connection: Connection, call: (current: Connection) => Promise<T>): Promise<T> {
    return this.options.withFreshToken ? this.options.withFreshToken(connection, call) : call(connection);
  }

  private note(session: SessionRecord, line: string): void {
    if (session.runId) this.options.runs.logRunNote(session.runId, line);
    this.options.states.record(session.triggerId, { at: this.options.now(), source: 'webhook', decision: `error: ${line}` });
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimer(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  /** Writes every session down; resolves once this content (or newer) is on disk. */
  private save(): Promise<void> {
    return this.options.store.writeAgentSessions(() => ({ sessions: this.sessions }));
  }

  /** Stops sending (what is unsent goes at the next start) and waits for what is under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.cancelling, ...this.sending.values()]);
    await this.save();
  }
}

/** What a step runs, in a line: its command, its agent and model, its message, its pull request. */
function whatStepRuns(run: Readonly<Run>, stepRun: Readonly<StepRun>): string {
  const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
  switch (step?.kind) {
    case 'shell':
      return cut(step.command);
    case 'agent':
      return [step.harnessId ?? run.pipeline?.harnessId ?? 'the default agent', step.model ?? run.pipeline?.model].filter(Boolean).join(' · ');
    case 'approval':
      return cut(stepRun.message ?? step.message);
    case 'pullRequest':
      return `pull request to ${step.repository ?? 'the remote\'s repository'}${step.base ? ` · ${step.base}` : ''}`;
    default:
      return stepRun.kind;
  }
}

/** The `select` signal and its options for a step with choices (option values are the option ids). */
function choiceSignal(step: Pipeline['steps'][number] | undefined): Pick<PlannedActivity, 'signal' | 'signalMetadata'> {
  if (step?.kind !== 'approval' || !step.choices?.options.length) return {};
  return { signal: 'select', signalMetadata: { options: step.choices.options.map((label, index) => ({ label, value: String(index + 1) })) } };
}

function answerHelp(step: ApprovalStep | undefined): string {
  const choices = step?.choices?.options.length ? `Choose ${step.choices.mode === 'multiple' ? 'one or more (separated by commas)' : 'one'} of: ${step.choices.options.map((label, index) => `${index + 1} = ${label}`).join(', ')}; or answer` : 'Answer';
  return `${choices} **approve** or **reject**, anything after it being the comment.`;
}

/** At most `limit` characters, on one line when short. */
function cut(value: string, limit = quoteLimit): string {
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}
