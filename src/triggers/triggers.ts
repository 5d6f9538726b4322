// The trigger service: trigger configuration, webhook deliveries, polling and write-back, joined
// here. What each part decides lives in its own file: admission.ts (webhook deliveries, dedup,
// re-trigger, the ledger's decisions; the webhook server hands deliveries to it directly),
// poller.ts, write-back.ts, trigger-state.ts (what each trigger remembers), and one provider per
// kind under providers/.

import type { Issue, TestResult, TriggerConfig, TriggerKind, TriggerState } from '../core/api';
import { ConflictError, FactoryError, NotFoundError, errorMessage, quote, testFailure } from '../core/errors';
import { newId, randomSecret } from '../core/ids';
import { jqlProjects } from '../core/jql-projects';
import { connectionKindOf, validateTrigger } from '../core/trigger-config';
import type { ConfigService } from '../engine/config';
import type { RunService } from '../engine/runs';
import type { DataStore } from '../store/data-store';
import { Admission } from './admission';
import { ApprovalCommands } from './approval-commands';
import type { ConnectionService } from './connections';
import { Poller } from './poller';
import { LinearAgentSessions, type LinearAgentOptions } from './linear-agent';
import type { TrackerProvider } from './provider';
import { TriggerStates } from './trigger-state';
import { WriteBack } from './write-back';

export { providerRefusedAnswer, type DeliveryAnswer } from './admission';
export type { IncomingWebhook } from './provider';

/** Issues `testTrigger` previews at most. */
const previewLimit = 20;

export interface TriggerServiceOptions {
  store: DataStore;
  config: ConfigService;
  runs: RunService;
  connections: ConnectionService;
  /** The tracker kinds this build runs (the generic webhook is always there). */
  providers: Partial<Record<Exclude<TriggerKind, 'webhook'>, TrackerProvider>>;
  /** A trigger failed to poll (once per failure streak). */
  failed: (trigger: TriggerConfig, message: string) => void;
  runUrl: (runId: string) => string | undefined;
  /** The engine's events: Linear agent sessions follow the output of running steps. */
  events?: Parameters<LinearAgentSessions['open']>[0];
  /** Runs a call with a Linear account's token fresh (an app installation's is refreshed: linear-oauth.ts). */
  linearToken?: LinearAgentOptions['withFreshToken'];
  /** Write-back retry waits (tests shorten them). */
  writeBackRetryDelaysMs?: readonly number[];
  /** How soon a trigger that never polled polls (tests lengthen it to poll by hand only). */
  firstPollDelayMs?: number;
  now?: () => number;
}

export class TriggerService {
  private readonly records: TriggerStates;
  /** Decides webhook deliveries (`receive`, the webhook server's receiver) and polled issues. */
  readonly admission: Admission;
  private readonly poller: Poller;
  private readonly writeBack: WriteBack;
  private readonly commands: ApprovalCommands;
  private readonly agentSessions: LinearAgentSessions;
  private readonly now: () => number;

  private constructor(private readonly options: TriggerServiceOptions) {
    const now = (this.now = options.now ?? Date.now);
    const { config, connections, providers } = options;
    const trigger = (id: string) => config.current.triggers.find((candidate) => candidate.id === id);
    const connection = (id: string | undefined) => connections.get(id);
    this.records = new TriggerStates(options.store, now);
    this.commands = new ApprovalCommands({ states: this.records, runs: options.runs, connection, notice: (run, notice) => this.writeBack.notice(run, notice), now });
    this.agentSessions = new LinearAgentSessions({
      store: options.store, states: this.records, runs: options.runs, connection, trigger, runUrl: options.runUrl, now,
      ...(options.linearToken ? { withFreshToken: options.linearToken } : {}),
      pipeline: (id) => config.current.pipelines.find((pipeline) => pipeline.id === id),
    });
    this.admission = new Admission({ states: this.records, runs: options.runs, trigger, providers, connection, commands: this.commands, agentSessions: this.agentSessions, now });
    this.poller = new Poller({
      afterPoll: (polled, signal) => this.commands.poll(polled, signal),
      // An agent trigger's runs start from agent sessions only: it is never polled.
      states: this.records, admission: this.admission, providers, triggers: () => config.current.triggers.filter((candidate) => !candidate.agent), connection, failed: options.failed, now,
      ...(options.firstPollDelayMs !== undefined ? { firstPollDelayMs: options.firstPollDelayMs } : {}),
    });
    this.writeBack = new WriteBack({
      states: this.records, providers, trigger, connection, now, runUrl: options.runUrl,
      runLog: (runId, line) => options.runs.logRunNote(runId, line),
      ...(options.writeBackRetryDelaysMs ? { retryDelaysMs: options.writeBackRetryDelaysMs } : {}),
    });
  }

  /** Loads every trigger's state, subscribes to runs and configuration, and starts polling. */
  static async open(options: TriggerServiceOptions): Promise<TriggerService> {
    const service = new TriggerService(options);
    const { runs, config } = options;
    await service.records.load(config.current.triggers.map((trigger) => trigger.id), runs.allRuns());
    runs.onBeforeDelete((run) => service.records.keepKeyOf(run));
    runs.onLifecycle((event) => service.writeBack.runEvent(event));
    await service.writeBack.reconcile(runs);
    await service.agentSessions.open(options.events);
    config.subscribe(() => service.poller.schedule());
    service.poller.schedule();
    return service;
  }

  /** Called after any trigger state changed (the API sends a coalesced `snapshot`). */
  subscribe(listener: () => void): () => void {
    return this.records.subscribe(listener);
  }

  /** Every trigger's state, by trigger id; a Jira trigger's with the projects its webhook events are checked for. */
  states(): Record<string, TriggerState> {
    const states = this.records.states();
    for (const trigger of this.options.config.current.triggers) {
      const projects = trigger.kind === 'jira' && states[trigger.id] ? jqlProjects(trigger.filter?.query ?? '') : undefined;
      if (projects) states[trigger.id] = { ...states[trigger.id]!, webhookProjects: projects };
    }
    return states;
  }

  // ─── Configuration ───

  private getTrigger(id: unknown): TriggerConfig {
    const trigger = this.options.config.current.triggers.find((candidate) => candidate.id === id);
    if (!trigger) throw new NotFoundError(`No trigger with id ${quote(id)}`);
    return trigger;
  }

  /** The trigger checked here and, for a tracker kind, against its service. */
  private async checked(input: unknown): Promise<ReturnType<typeof validateTrigger>> {
    const config = this.options.config.current;
    const clean = validateTrigger(input, {
      pipelineIds: config.pipelines.map((pipeline) => pipeline.id),
      connectionIds: config.connections.filter((connection) => connection.kind === connectionKindOf((input as { kind?: unknown }).kind as TriggerKind)).map((connection) => connection.id),
      availableKinds: ['webhook', ...(Object.keys(this.options.providers) as TriggerKind[])],
      runnerIds: config.runners.map((runner) => runner.id),
    });
    const provider = clean.kind === 'webhook' ? undefined : this.options.providers[clean.kind];
    if (provider) await provider.checkTrigger({ ...clean, id: clean.id ?? '' }, this.options.connections.get(clean.connectionId)!);
    return clean;
  }

  /** Creates (no id) or updates a trigger. A new generic webhook trigger gets a random secret. */
  async saveTrigger(input: unknown): Promise<TriggerConfig> {
    const clean = await this.checked(input);
    return this.options.config.update((config) => {
      const index = clean.id ? config.triggers.findIndex((trigger) => trigger.id === clean.id) : -1;
      if (clean.id && index < 0) throw new NotFoundError(`No trigger with id ${quote(clean.id)}`);
      const isNew = index < 0;
      if (isNew && clean.kind === 'webhook' && clean.webhookSecret === undefined) clean.webhookSecret = randomSecret(24);
      if (!isNew && clean.webhookSecret === undefined) clean.webhookSecret = config.triggers[index]!.webhookSecret;
      if (clean.webhookSecret === '') delete clean.webhookSecret;
      const trigger: TriggerConfig = { ...clean, id: clean.id ?? newId('trg') };
      if (!isNew && config.triggers[index]!.kind !== trigger.kind) throw new ConflictError('A trigger cannot change its kind: make a new trigger instead');
      const triggers = isNew ? [...config.triggers, trigger] : config.triggers.with(index, trigger);
      const entry = this.records.entry(trigger.id);
      // Another filter or account: the next poll is a full one, so issues that match now are found.
      if (!isNew && JSON.stringify([trigger.filter, trigger.connectionId]) !== JSON.stringify([config.triggers[index]!.filter, config.triggers[index]!.connectionId])) delete entry.file.cursor;
      return { config: { ...config, triggers }, result: trigger };
    });
  }

  async deleteTrigger(id: unknown): Promise<void> {
    const trigger = this.getTrigger(id);
    await this.options.config.update((config) => ({ config: { ...config, triggers: config.triggers.filter((candidate) => candidate.id !== trigger.id) }, result: undefined }));
    await this.records.delete(trigger.id);
  }

  /** Checks a trigger without saving it, and lists the issues that match it now (the first 20). */
  async testTrigger(input: unknown): Promise<TestResult & { issues: Issue[] }> {
    try {
      const clean = await this.checked(input);
      const provider = clean.kind === 'webhook' ? undefined : this.options.providers[clean.kind];
      const issues: Issue[] = [];
      if (!provider) return { ok: true, issues };
      const pages = provider.poll({ ...clean, id: clean.id ?? '' }, this.options.connections.get(clean.connectionId)!);
      for await (const page of pages) {
        for (const observed of page) if (observed.outside === undefined && issues.length < previewLimit) issues.push({ ...observed.issue, key: observed.key });
        if (issues.length >= previewLimit) break;
      }
      return { ok: true, issues };
    } catch (error) {
      if (error instanceof FactoryError) return { ...testFailure(error), issues: [] };
      throw error;
    }
  }

  /** Checks a trigger now: polls a tracker trigger; a generic webhook trigger's state is returned as is. */
  pollTrigger(id: unknown): Promise<TriggerState> {
    return this.poller.pollNow(this.getTrigger(id));
  }

  /** Forgets the processed keys: the same issues can start runs again (a tracker's next poll is full). */
  async resetTrigger(id: unknown): Promise<void> {
    const trigger = this.getTrigger(id);
    this.records.reset(this.records.entry(trigger.id));
    this.records.record(trigger.id, { at: this.now(), source: 'test', decision: 'reset: processed keys forgotten' });
    await this.records.persist(trigger.id);
  }

  /**
   * Sends a sample issue to a generic webhook trigger as an outside sender would: an HTTP POST to
   * its URL on the webhook server, with its token, through the same door and checks as any
   * delivery. Resolves with what the server answered (201: a run started); only an outside
   * network's reach is left untested.
   */
  async sendTestEvent(id: unknown, webhookUrl: string | null): Promise<TestResult & { status?: number }> {
    const trigger = this.getTrigger(id);
    if (trigger.kind !== 'webhook') throw new ConflictError(`Only a generic webhook trigger takes a test event: use Poll now for ${quote(trigger.name)}`);
    if (!webhookUrl) throw new ConflictError('The webhook server is off: switch it on in Settings to send a test event');
    const url = `${webhookUrl}/hooks/${encodeURIComponent(trigger.id)}`;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(trigger.webhookSecret ? { 'X-Factory-Token': trigger.webhookSecret } : {}) },
        body: JSON.stringify({ title: 'Test event from Factory', key: `TEST-${this.now()}`, description: 'Sent by Send test event on the Triggers screen.' }),
      });
      const answer = (await response.json().catch(() => ({}))) as { error?: string };
      return response.status === 201 ? { ok: true, status: 201 } : { ok: false, status: response.status, error: answer.error ?? `HTTP ${response.status}` };
    } catch (error) {
      return { ok: false, error: `The webhook server did not answer at ${webhookUrl}: ${errorMessage(error)}` };
    }
  }

  /** Saves the ledger entries still waiting for their time; resolves once they are durable. */
  flush(): Promise<void> {
    return this.records.flush();
  }

  /** Stops polling and write-back (waiting for what is under way), then saves every state. */
  async stop(): Promise<void> {
    await this.poller.stop();
    await this.writeBack.stop();
    await this.agentSessions.stop();
    await this.records.flush();
  }
}
