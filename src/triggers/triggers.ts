// The trigger service: trigger configuration, webhook deliveries, dedup and the ledger.
//
// Dedup (DESIGN §4): a key counts as processed once its run is on disk. The run itself records the
// key (`run.triggerId` + `run.issue.key`), so the one durable write of the run is also the durable
// record of the key: a 201 is answered only after it. At start the processed keys are rebuilt from
// the runs (those made after the trigger's last reset) plus the keys kept in triggers/<id>.json
// (keys of deleted runs, written before the run goes).

import type { LedgerEntry, TriggerConfig, TriggerKind, TriggerState } from '../core/api';
import { ConflictError, NotFoundError, ValidationError, errorMessage, quote } from '../core/errors';
import { newId, randomSecret } from '../core/ids';
import { isPlainObject } from '../core/settings';
import { validateTrigger } from '../core/trigger-config';
import type { ConfigService } from '../engine/config';
import type { RunService } from '../engine/runs';
import type { DataStore } from '../store/data-store';
import type { IncomingWebhook, TriggerProvider } from './provider';

export const ledgerLimit = 200;
/**
 * A trigger's file is saved at most this often for ledger entries alone: the ledger is a record,
 * not a promise (a 201's promise is its run), so a burst of deliveries costs one write a second,
 * not one each. A crash can lose the last second of entries; `flush` (at stop) loses nothing.
 */
export const ledgerSaveDelayMs = 1000;

/** The answer of a delivery, as the webhook door sends it (spec: webhook endpoint tables). */
export interface DeliveryAnswer {
  status: 200 | 201 | 202 | 400 | 401 | 404 | 409;
  body: Record<string, unknown>;
}

/** triggers/<id>.json */
interface TriggerFile {
  state: TriggerState;
  /** Keys that stay processed although their runs are gone (deleted runs). */
  keptKeys: string[];
  /** Runs made before this time do not count for dedup (resetTrigger). */
  resetAt: number;
}

interface Entry {
  file: TriggerFile;
  processed: Set<string>;
  /** Deliveries starting a run right now, by key: a duplicate racing them waits for the answer. */
  starting: Map<string, Promise<unknown>>;
}

export interface TriggerServiceOptions {
  store: DataStore;
  config: ConfigService;
  runs: RunService;
  providers: Partial<Record<TriggerKind, TriggerProvider>>;
  now?: () => number;
}

function emptyState(triggerId: string): TriggerState {
  return { triggerId, processedCount: 0, ledger: [] };
}

export class TriggerService {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  /** Ledger saves waiting for their time, by trigger id. */
  private readonly saveTimers = new Map<string, NodeJS.Timeout>();
  private readonly now: () => number;

  private constructor(private readonly options: TriggerServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  static async open(options: TriggerServiceOptions): Promise<TriggerService> {
    const service = new TriggerService(options);
    for (const trigger of options.config.current.triggers) {
      const raw = await options.store.readTriggerFile(trigger.id).catch((error) => {
        console.warn(`Trigger ${trigger.id}: ${errorMessage(error)}; starting with an empty ledger`);
        return undefined;
      });
      const file: TriggerFile = isPlainObject(raw) && isPlainObject(raw.state)
        ? { state: { ...emptyState(trigger.id), ...(raw.state as object), triggerId: trigger.id }, keptKeys: Array.isArray(raw.keptKeys) ? raw.keptKeys.filter((key): key is string => typeof key === 'string') : [], resetAt: typeof raw.resetAt === 'number' ? raw.resetAt : 0 }
        : { state: emptyState(trigger.id), keptKeys: [], resetAt: 0 };
      if (!Array.isArray(file.state.ledger)) file.state.ledger = [];
      service.entries.set(trigger.id, { file, processed: new Set(file.keptKeys), starting: new Map() });
    }
    for (const run of options.runs.allRuns()) {
      const entry = run.triggerId ? service.entries.get(run.triggerId) : undefined;
      if (entry && run.issue?.key && run.createdAt >= entry.file.resetAt) entry.processed.add(run.issue.key);
    }
    for (const entry of service.entries.values()) entry.file.state.processedCount = entry.processed.size;
    options.runs.onBeforeDelete((run) => service.keepKeyOf(run.triggerId, run.issue?.key));
    return service;
  }

  /** Called after any trigger state changed (the API sends a coalesced `snapshot`). */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Every trigger's state, by trigger id. */
  states(): Record<string, TriggerState> {
    const states: Record<string, TriggerState> = {};
    for (const [id, entry] of this.entries) states[id] = entry.file.state;
    return states;
  }

  private entry(triggerId: string): Entry {
    let entry = this.entries.get(triggerId);
    if (!entry) {
      entry = { file: { state: emptyState(triggerId), keptKeys: [], resetAt: 0 }, processed: new Set(), starting: new Map() };
      this.entries.set(triggerId, entry);
    }
    return entry;
  }

  private getTrigger(id: unknown): TriggerConfig {
    const trigger = this.options.config.current.triggers.find((candidate) => candidate.id === id);
    if (!trigger) throw new NotFoundError(`No trigger with id ${quote(id)}`);
    return trigger;
  }

  private context() {
    const config = this.options.config.current;
    return {
      pipelineIds: config.pipelines.map((pipeline) => pipeline.id),
      connectionIds: config.connections.map((connection) => connection.id),
      availableKinds: Object.keys(this.options.providers) as TriggerKind[],
    };
  }

  // ─── Configuration ───

  /** Creates (no id) or updates a trigger. A new generic webhook trigger gets a random secret. */
  saveTrigger(input: unknown): Promise<TriggerConfig> {
    return this.options.config.update((config) => {
      const clean = validateTrigger(input, this.context());
      const index = clean.id ? config.triggers.findIndex((trigger) => trigger.id === clean.id) : -1;
      if (clean.id && index < 0) throw new NotFoundError(`No trigger with id ${quote(clean.id)}`);
      const isNew = index < 0;
      if (isNew && clean.kind === 'webhook' && clean.webhookSecret === undefined) clean.webhookSecret = randomSecret(24);
      if (!isNew && clean.webhookSecret === undefined) clean.webhookSecret = config.triggers[index]!.webhookSecret;
      if (clean.webhookSecret === '') delete clean.webhookSecret;
      const trigger: TriggerConfig = { ...clean, id: clean.id ?? newId('trg') };
      if (!isNew && config.triggers[index]!.kind !== trigger.kind) throw new ConflictError('A trigger cannot change its kind: make a new trigger instead');
      const triggers = isNew ? [...config.triggers, trigger] : config.triggers.with(index, trigger);
      this.entry(trigger.id);
      return { config: { ...config, triggers }, result: trigger };
    });
  }

  async deleteTrigger(id: unknown): Promise<void> {
    const trigger = this.getTrigger(id);
    await this.options.config.update((config) => ({ config: { ...config, triggers: config.triggers.filter((candidate) => candidate.id !== trigger.id) }, result: undefined }));
    this.entries.delete(trigger.id);
    clearTimeout(this.saveTimers.get(trigger.id));
    this.saveTimers.delete(trigger.id);
    await this.options.store.deleteTriggerFile(trigger.id);
    this.changed();
  }

  /** Validates a trigger without saving it. Generic webhooks have nothing to preview. */
  async testTrigger(input: unknown): Promise<{ ok: boolean; error?: string; issues: [] }> {
    try {
      validateTrigger(input, this.context());
      return { ok: true, issues: [] };
    } catch (error) {
      if (error instanceof ValidationError) return { ok: false, error: error.message, issues: [] };
      throw error;
    }
  }

  /** Checks a trigger now. A generic webhook trigger has nothing to poll: its state is returned. */
  async pollTrigger(id: unknown): Promise<TriggerState> {
    const trigger = this.getTrigger(id);
    return this.entry(trigger.id).file.state;
  }

  /** Forgets the processed keys: the same issues can start runs again. */
  async resetTrigger(id: unknown): Promise<void> {
    const trigger = this.getTrigger(id);
    const entry = this.entry(trigger.id);
    entry.processed.clear();
    entry.file.keptKeys = [];
    entry.file.resetAt = this.now();
    entry.file.state.processedCount = 0;
    this.record(trigger.id, { at: this.now(), source: 'test', decision: 'reset: processed keys forgotten' });
    await this.persist(trigger.id);
  }

  // ─── Deliveries ───

  /** Handles one request to /hooks/<trigger-id> and says what to answer (spec: webhook tables). */
  async receive(triggerId: string, webhook: IncomingWebhook): Promise<DeliveryAnswer> {
    const trigger = this.options.config.current.triggers.find((candidate) => candidate.id === triggerId);
    if (!trigger) return { status: 404, body: { error: 'unknown trigger' } };
    const at = webhook.receivedAt;
    if (!trigger.enabled) {
      this.record(trigger.id, { at, source: 'webhook', decision: 'disabled' });
      return { status: 409, body: { error: 'trigger disabled' } };
    }
    const provider = this.options.providers[trigger.kind];
    if (!provider) return { status: 404, body: { error: 'unknown trigger' } };
    if (!provider.verify(webhook, trigger)) {
      this.record(trigger.id, { at, source: 'webhook', decision: 'invalid signature' });
      return { status: 401, body: { error: 'invalid signature' } };
    }
    const verdict = provider.parse(webhook, trigger);
    if (verdict.kind === 'invalid') {
      this.record(trigger.id, { at, source: 'webhook', decision: `invalid: ${verdict.reason}` });
      return { status: 400, body: { error: verdict.reason } };
    }
    if (verdict.kind === 'ignored') {
      this.record(trigger.id, { at, source: 'webhook', decision: verdict.reason });
      return { status: 202, body: { ignored: true } };
    }
    const entry = this.entry(trigger.id);
    const { key } = verdict;
    for (let racing = entry.starting.get(key); racing; racing = entry.starting.get(key)) await racing.catch(() => undefined);
    if (entry.processed.has(key)) {
      this.record(trigger.id, { at, source: 'webhook', key, decision: 'duplicate' });
      return { status: 200, body: { issue: key, created: false } };
    }
    const issue = { ...verdict.issue, key };
    const starting = this.options.runs.queueRun({ pipelineId: trigger.pipelineId, issue, variables: trigger.variables ?? {} }, { triggerId: trigger.id });
    entry.starting.set(key, starting);
    try {
      const runId = await starting;
      entry.processed.add(key);
      entry.file.state.processedCount = entry.processed.size;
      this.record(trigger.id, { at, source: 'webhook', key, decision: `started ${runId}`, runId });
      return { status: 201, body: { issue: key, created: true } };
    } catch (error) {
      const message = errorMessage(error);
      this.record(trigger.id, { at, source: 'webhook', key, decision: `error: ${message}` });
      entry.file.state.lastError = message;
      return { status: 400, body: { error: message } };
    } finally {
      entry.starting.delete(key);
    }
  }

  // ─── State ───

  /** Adds a ledger entry (newest first, at most 200); the state is saved within `ledgerSaveDelayMs`. */
  private record(triggerId: string, ledgerEntry: LedgerEntry): void {
    const entry = this.entries.get(triggerId);
    if (!entry) return;
    const state = entry.file.state;
    state.ledger.unshift(ledgerEntry);
    if (state.ledger.length > ledgerLimit) state.ledger.length = ledgerLimit;
    if (ledgerEntry.source !== 'test') state.lastEventAt = ledgerEntry.at;
    if (!this.saveTimers.has(triggerId)) {
      const timer = setTimeout(() => {
        this.persist(triggerId).catch((error) => console.error(`Saving trigger ${triggerId} failed: ${errorMessage(error)}`));
      }, ledgerSaveDelayMs);
      timer.unref();
      this.saveTimers.set(triggerId, timer);
    }
    this.changed();
  }

  /** Saves a trigger's file now (a save that was waiting for its time is done by this one). */
  private persist(triggerId: string): Promise<void> {
    clearTimeout(this.saveTimers.get(triggerId));
    this.saveTimers.delete(triggerId);
    const entry = this.entries.get(triggerId);
    if (!entry) return Promise.resolve();
    return this.options.store.writeTriggerFile(triggerId, () => entry.file);
  }

  /** Saves the ledger entries still waiting for their time; resolves once they are durable. */
  async flush(): Promise<void> {
    await Promise.all([...this.saveTimers.keys()].map((triggerId) => this.persist(triggerId)));
  }

  /** Before a triggered run is deleted, its key is kept in the trigger's file, durably. */
  private async keepKeyOf(triggerId: string | undefined, key: string | undefined): Promise<void> {
    const entry = triggerId ? this.entries.get(triggerId) : undefined;
    if (!entry || !key || !entry.processed.has(key)) return;
    if (!entry.file.keptKeys.includes(key)) entry.file.keptKeys.push(key);
    await this.persist(triggerId!);
  }
}
