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

import type { Connection, Pipeline, Run, StepRun, TriggerConfig } from '../core/api';
import { ConflictError, errorMessage, quote } from '../core/errors';
import { formatDuration, isFinished } from '../core/runs';
import { isRecord } from '../core/validate';
import type { RunLifecycleEvent, RunService, RunStepEvent } from '../engine/runs';
import type { DataStore } from '../store/data-store';
import type { DeliveryAnswer } from './admission';
import { ActivityPoster, type PlannedActivity } from './linear-agent-activities';
import { answerHelp, answerWaitingStep, guideNextAgentStep, type PromptPorts } from './linear-agent-answers';
import { choiceSignal, cut, runEndLines, stepOutcomeLine, whatStepRuns } from './linear-agent-words';
import { webhookJson, type IncomingWebhook } from './provider';
import { signedAgeProblem } from './providers/linear';
import { readAgentSessionEvent, workspaceOf, type AgentSessionEvent } from './providers/linear-agent';
import type { TriggerStates } from './trigger-state';

/** A long step tells its session how it is doing at most this often. */
const progressIntervalMs = 60_000;
/** Sessions whose run ended this long ago are forgotten (their prompts would find no run to decide). */
const sessionKeepMs = 30 * 24 * 3600_000;
/** Prompt ids remembered per session. */
const promptLimit = 200;

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
  /** When each session last told Linear about its running step, and that step's output lines since. */
  private readonly progress = new Map<string, { at: number; lines: number }>();
  /** Workspace ids by connection (id and token): asked once. */
  private readonly workspaces = new Map<string, Promise<string>>();
  /** Cancellations Linear asked for, under way. */
  private readonly cancelling = new Set<Promise<void>>();
  private readonly poster: ActivityPoster<SessionRecord>;

  constructor(private readonly options: LinearAgentOptions) {
    this.poster = new ActivityPoster<SessionRecord>({
      session: (sessionId) => this.sessions[sessionId],
      connection: (session) => this.options.connection(this.options.trigger(session.triggerId)?.connectionId),
      fresh: (connection, call) => this.fresh(connection, call),
      note: (session, line) => this.note(session, line),
      save: () => this.save(),
      ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
    });
  }

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
      this.poster.send(sessionId);
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
    this.poster.plan(sessionId, 'thought:start', { type: 'thought', body: `Starting the pipeline **${pipeline?.name ?? trigger.pipelineId}** on ${issue.key}${steps ? `: ${steps}` : ''}.` });
    try {
      await this.save();
      const runId = await this.options.runs.queueRun({ pipelineId: trigger.pipelineId, issue, variables: trigger.variables ?? {} }, { triggerId: trigger.id, agentSessionId: sessionId });
      session.runId = runId;
      this.sessionOfRun.set(runId, sessionId);
      const url = this.options.runUrl(runId);
      if (url) this.poster.plan(sessionId, 'link', undefined, { link: url });
      record(`started ${runId} for agent session ${sessionId}`, issue.key, runId);
      return { status: 201, body: { issue: issue.key, created: true } };
    } catch (error) {
      const message = errorMessage(error);
      this.poster.plan(sessionId, 'final', { type: 'error', body: `Factory could not start the run: ${cut(message)}` });
      record(`error: ${message}`, issue.key);
      return { status: 400, body: { error: message } };
    } finally {
      this.poster.send(sessionId);
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
      this.poster.plan(event.sessionId, `prompt:${activity.id}`, { type: 'thought', body: `${name} is not among the trigger's approvers, so Factory did not act on this.` });
      record(`ignored: ${name} is not among the approvers`, key, runId);
    } else if (!run) {
      this.poster.plan(event.sessionId, `prompt:${activity.id}`, { type: 'thought', body: 'The run of this session no longer exists.' });
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
        this.poster.plan(event.sessionId, `prompt:${activity.id}`, { type: 'response', body: `The run had already ended (${run.status}).` });
        record(`ignored: stop for a run already ${run.status}`, key, run.id);
      }
    } else if (run.status === 'waiting') {
      await answerWaitingStep(this.promptPorts(event.sessionId, activity.id, record), run, activity, name, key);
    } else if (!isFinished(run.status)) {
      guideNextAgentStep(this.promptPorts(event.sessionId, activity.id, record), session.guidance, run, activity, name);
      record(`guidance from ${name}`, key, run.id);
    } else {
      this.poster.plan(event.sessionId, `prompt:${activity.id}`, { type: 'response', body: `This run has ended (${run.status}); delegate the issue again for a new run.` });
      record(`ignored: a prompt for a run already ${run.status}`, key, run.id);
    }
    await this.save();
    this.poster.send(event.sessionId);
    return { status: 200, body: { ok: true } };
  }

  /** What answering a prompt needs: the runs, the session's reply to it (once), and the ledger. */
  private promptPorts(sessionId: string, promptId: string, record: PromptPorts['record']): PromptPorts {
    return { runs: this.options.runs, record, reply: (content, extra) => this.poster.plan(sessionId, `prompt:${promptId}`, content, extra) };
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
    this.poster.send(sessionId);
  }

  private stepEvent(event: RunStepEvent): void {
    const { run, step } = event;
    const sessionId = run.agentSessionId;
    if (!sessionId || !this.sessions[sessionId]) return;
    if (event.type === 'step-started') {
      this.progress.set(sessionId, { at: this.options.now(), lines: 0 });
      if (step.kind === 'approval') return; // its question is the elicitation
      this.poster.plan(sessionId, `start:${step.id}:${step.attempt}`, { type: 'action', action: step.name, parameter: whatStepRuns(run, step) });
    } else {
      this.progress.delete(sessionId);
      this.poster.plan(sessionId, `end:${step.id}:${step.attempt}`, { type: 'action', action: step.name, parameter: whatStepRuns(run, step), result: stepOutcomeLine(step) });
    }
    this.poster.send(sessionId);
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
      this.poster.plan(sessionId, `progress:${step.id}:${step.attempt}:${now}`, { type: 'thought', body: `Still working on ${step.name} (${formatDuration(now - (step.startedAt ?? now))}, ${lines.toLocaleString('en-US')} line${lines === 1 ? '' : 's'} of output so far).` }, { ephemeral: true });
      this.poster.send(sessionId);
    }
  }

  private planQuestion(sessionId: string, run: Readonly<Run>, stepRun: Readonly<StepRun>): void {
    const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
    const approval = step?.kind === 'approval' ? step : undefined;
    const budget = stepRun.budgetStop;
    const about = budget ? `The agent reached its ${budget.limit} budget (${budget.spent} of ${budget.allowed}): approve to let it go on, reject to stop.` : stepRun.message ?? (approval ? approval.message : '');
    // An agent step can wait more than once in one attempt (each cap it reaches): each wait is its own question.
    this.poster.plan(sessionId, `ask:${stepRun.id}:${stepRun.attempt}${budget ? `:${budget.at}` : ''}`, { type: 'elicitation', body: `**${stepRun.name}** waits for a decision.\n\n${cut(about, 2000)}\n\n${answerHelp(approval)}` }, choiceSignal(step));
  }

  private planEnd(sessionId: string, run: Readonly<Run>): void {
    const lines = runEndLines(run, this.sessions[sessionId]!.stopped === true, this.options.runUrl(run.id), (id) => this.options.connection(id));
    this.poster.plan(sessionId, 'final', { type: run.status === 'failed' ? 'error' : 'response', body: lines.join('\n\n') });
  }

  // ─── Recording ───

  private fresh<T>(connection: Connection, call: (current: Connection) => Promise<T>): Promise<T> {
    return this.options.withFreshToken ? this.options.withFreshToken(connection, call) : call(connection);
  }

  private note(session: SessionRecord, line: string): void {
    if (session.runId) this.options.runs.logRunNote(session.runId, line);
    this.options.states.record(session.triggerId, { at: this.options.now(), source: 'webhook', decision: `error: ${line}` });
  }

  /** Writes every session down; resolves once this content (or newer) is on disk. */
  private save(): Promise<void> {
    return this.options.store.writeAgentSessions(() => ({ sessions: this.sessions }));
  }

  /** Stops sending (what is unsent goes at the next start) and waits for what is under way. */
  async stop(): Promise<void> {
    await Promise.all([...this.cancelling, this.poster.stop()]);
    await this.save();
  }
}
