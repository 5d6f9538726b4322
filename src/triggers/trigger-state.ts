// What each trigger remembers, in triggers/<id>.json: its state and ledger (what the UI shows),
// and its dedup memory: which keys are processed, which left the filter, which deliveries were
// seen, where the next incremental poll starts, and the comment each of its runs keeps.
//
// Dedup (DESIGN §4): a key counts as processed once its run is on disk. The run records the key
// (`run.triggerId` + `run.issue.key`), so the one durable write of the run is also the durable
// record of the key. At start the processed keys are rebuilt from the runs made after the
// trigger's last reset and after the key last left the filter, plus the keys of deleted runs.

import type { LedgerEntry, Run, RunFollowUp, RunStatus, TriggerState } from '../core/api';
import { errorMessage } from '../core/errors';
import { isRecord } from '../core/validate';
import type { DataStore } from '../store/data-store';
import type { CommentInline } from './comment-text';

const ledgerLimit = 200;
/**
 * A trigger's file is saved at most this often for ledger entries alone: the ledger is a record,
 * not a promise (a 201's promise is its run), so a burst of deliveries costs one write a second,
 * not one each. A crash can lose the last second of entries; `flush` (at stop) loses nothing.
 */
const ledgerSaveDelayMs = 1000;
/** Delivery ids remembered per trigger (the latest; Linear retries within 7 hours, Jira within minutes). */
const deliveryLimit = 5000;

/** What write-back last did for one run: its comment, and the run status the comment shows. */
interface WriteBackRecord {
  commentId?: string;
  shown?: RunStatus;
  /** The write-back mark (state or label) last set. */
  mark?: string;
  /** Why the last approval command on the issue was not taken (approval-commands.ts), shown in the comment. */
  notice?: CommentInline[];
}

/** triggers/<id>.json */
interface TriggerFile {
  state: TriggerState;
  /** Keys that stay processed although their runs are gone (deleted runs). */
  keptKeys: string[];
  /** Runs made before this time do not count for dedup (resetTrigger). */
  resetAt: number;
  /** Keys that left the filter, and when: runs made before that do not count. */
  exits: Record<string, number>;
  /** Delivery ids already decided (their retries start nothing), and when. */
  deliveries: Record<string, number>;
  /** Where the next incremental poll starts (the provider's cursor); absent: a full poll. */
  cursor?: string;
  /** When the last full poll began. */
  fullPollAt?: number;
  writeBacks: Record<string, WriteBackRecord>;
  /** Approval command comments already decided (taken or refused), by the service's comment id, and when. */
  commands: Record<string, number>;
  /** Approval command comments being decided, by comment id: `<run id> <step id>` (approval-commands.ts). */
  commandsUnderWay: Record<string, string>;
}

export interface TriggerEntry {
  readonly triggerId: string;
  file: TriggerFile;
  /** Processed keys, with when they entered (their run's creation). */
  processed: Map<string, number>;
  /** The latest change time seen per key, so a stale event or an unchanged poll result decides nothing. */
  seen: Map<string, string>;
  /** Decisions under way per key: one key is decided one event at a time. */
  locks: Map<string, Promise<unknown>>;
}

/**
 * The dedup key of a follow-up run (github-review): the review it answers, or the lone comment,
 * e.g. `acme/app#12 review 237895671` (the repository in lower case, as GitHub matches it). A review
 * and the comments GitHub sends beside it share it.
 */
export function followUpKey(followUp: Pick<RunFollowUp, 'repository' | 'number' | 'reviewId' | 'commentId'>): string {
  return `${followUp.repository.toLowerCase()}#${followUp.number} ${followUp.reviewId !== undefined ? `review ${followUp.reviewId}` : `comment ${followUp.commentId}`}`;
}

/** The key a triggered run was admitted under: its follow-up's, else its issue's. */
function runKey(run: Run): string | undefined {
  return run.followUp ? followUpKey(run.followUp) : run.issue?.key;
}

/** A map keyed by outside text (issue keys, delivery ids): no prototype, so `__proto__` is a key like any other. */
function keyed<T>(from: object = {}): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

function emptyFile(triggerId: string): TriggerFile {
  return { state: { triggerId, processedCount: 0, ledger: [] }, keptKeys: [], resetAt: 0, exits: keyed(), deliveries: keyed(), writeBacks: keyed(), commands: keyed(), commandsUnderWay: keyed() };
}

/** A trigger file read back tolerantly: what is unreadable starts empty. */
function readFile(triggerId: string, raw: unknown): TriggerFile {
  const file = emptyFile(triggerId);
  if (!isRecord(raw) || !isRecord(raw.state)) return file;
  file.state = { ...file.state, ...(raw.state as object), triggerId };
  if (!Array.isArray(file.state.ledger)) file.state.ledger = [];
  if (Array.isArray(raw.keptKeys)) file.keptKeys = raw.keptKeys.filter((key): key is string => typeof key === 'string');
  if (typeof raw.resetAt === 'number') file.resetAt = raw.resetAt;
  if (typeof raw.cursor === 'string') file.cursor = raw.cursor;
  if (typeof raw.fullPollAt === 'number') file.fullPollAt = raw.fullPollAt;
  for (const name of ['exits', 'deliveries', 'writeBacks', 'commands', 'commandsUnderWay'] as const) if (isRecord(raw[name])) file[name] = keyed(raw[name] as object);
  return file;
}

export class TriggerStates {
  private readonly entries = new Map<string, TriggerEntry>();
  private readonly listeners = new Set<() => void>();
  /** Saves waiting for their time, by trigger id. */
  private readonly saveTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly store: DataStore, private readonly now: () => number) {}

  /** Reads the files of these triggers and rebuilds their processed keys from the runs. */
  async load(triggerIds: readonly string[], runs: Iterable<Run>): Promise<void> {
    for (const triggerId of triggerIds) {
      const raw = await this.store.readTriggerFile(triggerId).catch((error) => {
        console.warn(`Trigger ${triggerId}: ${errorMessage(error)}; starting with an empty ledger`);
        return undefined;
      });
      const file = readFile(triggerId, raw);
      this.entries.set(triggerId, { triggerId, file, processed: new Map(file.keptKeys.map((key) => [key, 0])), seen: new Map(), locks: new Map() });
    }
    for (const run of runs) {
      const entry = run.triggerId ? this.entries.get(run.triggerId) : undefined;
      const key = runKey(run);
      if (!entry || !key || run.createdAt < entry.file.resetAt || run.createdAt <= (entry.file.exits[key] ?? -1)) continue;
      entry.processed.set(key, Math.max(entry.processed.get(key) ?? 0, run.createdAt));
    }
    for (const entry of this.entries.values()) entry.file.state.processedCount = entry.processed.size;
  }

  /** The entry of a trigger (made empty when it has none yet). */
  entry(triggerId: string): TriggerEntry {
    let entry = this.entries.get(triggerId);
    if (!entry) {
      entry = { triggerId, file: emptyFile(triggerId), processed: new Map(), seen: new Map(), locks: new Map() };
      this.entries.set(triggerId, entry);
    }
    return entry;
  }

  has(triggerId: string): boolean {
    return this.entries.has(triggerId);
  }

  /** Every trigger's state, by trigger id. */
  states(): Record<string, TriggerState> {
    const states: Record<string, TriggerState> = {};
    for (const [id, entry] of this.entries) states[id] = entry.file.state;
    return states;
  }

  /** Called after any trigger state changed (the API sends a coalesced `snapshot`). */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the subscribers that a state changed, and saves it within `ledgerSaveDelayMs`. */
  changed(triggerId: string): void {
    if (!this.saveTimers.has(triggerId) && this.entries.has(triggerId)) {
      const timer = setTimeout(() => {
        this.persist(triggerId).catch((error) => console.error(`Saving trigger ${triggerId} failed: ${errorMessage(error)}`));
      }, ledgerSaveDelayMs);
      timer.unref();
      this.saveTimers.set(triggerId, timer);
    }
    for (const listener of this.listeners) listener();
  }

  /** Adds a ledger entry (newest first, at most 200). */
  record(triggerId: string, ledgerEntry: LedgerEntry): void {
    const entry = this.entries.get(triggerId);
    if (!entry) return;
    const state = entry.file.state;
    state.ledger.unshift(ledgerEntry);
    if (state.ledger.length > ledgerLimit) state.ledger.length = ledgerLimit;
    if (ledgerEntry.source !== 'test') state.lastEventAt = ledgerEntry.at;
    this.changed(triggerId);
  }

  /** Remembers a decided delivery id (the oldest are forgotten past `deliveryLimit`). */
  rememberDelivery(entry: TriggerEntry, deliveryId: string): void {
    this.remember(entry.file.deliveries, deliveryId);
  }

  /** Remembers a decided approval command comment (the oldest are forgotten past `deliveryLimit`). */
  rememberCommand(entry: TriggerEntry, commentId: string): void {
    this.remember(entry.file.commands, commentId);
  }

  /** Notes `id` in `seen` with the time, keeping the latest `deliveryLimit`. */
  private remember(seen: Record<string, number>, id: string): void {
    seen[id] = this.now();
    const ids = Object.keys(seen);
    if (ids.length <= deliveryLimit) return;
    ids.sort((left, right) => seen[left]! - seen[right]!);
    for (const old of ids.slice(0, ids.length - deliveryLimit)) delete seen[old];
  }

  /** A processed key that left the filter: the next match starts a new run. */
  leave(entry: TriggerEntry, key: string): void {
    entry.processed.delete(key);
    entry.file.exits[key] = this.now();
    entry.file.keptKeys = entry.file.keptKeys.filter((kept) => kept !== key);
    entry.file.state.processedCount = entry.processed.size;
  }

  /** Forgets the processed keys and the dedup memory: the same issues can start runs again. */
  reset(entry: TriggerEntry): void {
    entry.processed.clear();
    entry.seen.clear();
    Object.assign(entry.file, { keptKeys: [], resetAt: this.now(), exits: keyed(), deliveries: keyed() });
    delete entry.file.cursor;
    entry.file.state.processedCount = 0;
  }

  /** Saves a trigger's file now (a save that was waiting for its time is done by this one). */
  persist(triggerId: string): Promise<void> {
    clearTimeout(this.saveTimers.get(triggerId));
    this.saveTimers.delete(triggerId);
    const entry = this.entries.get(triggerId);
    if (!entry) return Promise.resolve();
    return this.store.writeTriggerFile(triggerId, () => entry.file);
  }

  /** Saves what is still waiting for its time; resolves once it is durable. */
  async flush(): Promise<void> {
    await Promise.all([...this.saveTimers.keys()].map((triggerId) => this.persist(triggerId)));
  }

  /** Forgets a deleted trigger and removes its file. */
  async delete(triggerId: string): Promise<void> {
    this.entries.delete(triggerId);
    clearTimeout(this.saveTimers.get(triggerId));
    this.saveTimers.delete(triggerId);
    await this.store.deleteTriggerFile(triggerId);
    for (const listener of this.listeners) listener();
  }

  /** Before a triggered run is deleted, its key is kept in the trigger's file, durably. */
  async keepKeyOf(run: Run): Promise<void> {
    const entry = run.triggerId ? this.entries.get(run.triggerId) : undefined;
    if (entry) delete entry.file.writeBacks[run.id];
    const key = runKey(run);
    if (!entry || !key || !entry.processed.has(key)) return;
    if (!entry.file.keptKeys.includes(key)) entry.file.keptKeys.push(key);
    await this.persist(entry.triggerId);
  }
}
