// Reads of the issues that unsigned tracker deliveries name. Without a webhook secret anyone who
// knows a trigger's URL can send deliveries, and each one makes Factory read an issue with the
// account's token: a flood would spend the account's rate limit. So (DECISIONS "Triggers"):
// - one issue is read once at a time, and a read is reused for `reuseMs` (single flight plus a
//   short cache): fifty deliveries of one issue cost one read;
// - each trigger has a budget of reads, a token bucket of `budget` reads refilled evenly over
//   `refillMs`: a delivery that would need a read past it is dropped, and the ledger says so.

import type { ObservedIssue } from './provider';

interface UnsignedReadLimits {
  /** How long a read of one issue answers further deliveries of it. */
  reuseMs: number;
  /** Reads a trigger may make at once; the bucket's size. */
  budget: number;
  /** The time in which an empty bucket fills up again. */
  refillMs: number;
}

/** Ten seconds of reuse; thirty reads a minute per trigger. */
export const defaultUnsignedReadLimits: UnsignedReadLimits = { reuseMs: 10_000, budget: 30, refillMs: 60_000 };

/** What `read` answers when the trigger's budget is spent: the delivery is dropped. */
export const overBudget = Symbol('over budget');

interface Reading {
  /** When the read began; it is reused until `reuseMs` after it ended. */
  endedAt?: number;
  result: Promise<ObservedIssue | undefined>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class UnsignedReads {
  private readonly readings = new Map<string, Reading>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number, private readonly limits: UnsignedReadLimits = defaultUnsignedReadLimits) {}

  /**
   * The issue `key` of trigger `triggerId` as `fetch` reads it: the read under way or done within
   * `reuseMs` when there is one, else a new read if the trigger's budget allows it, else
   * `overBudget`. A failed read is not reused.
   */
  read(triggerId: string, key: string, fetch: () => Promise<ObservedIssue | undefined>): Promise<ObservedIssue | undefined> | typeof overBudget {
    const now = this.now();
    this.forgetOld(now);
    const id = `${triggerId}\n${key}`;
    const reading = this.readings.get(id);
    if (reading && (reading.endedAt === undefined || now - reading.endedAt < this.limits.reuseMs)) return reading.result;
    if (!this.take(triggerId, now)) return overBudget;
    const fresh: Reading = { result: fetch() };
    this.readings.set(id, fresh);
    fresh.result.then(
      () => (fresh.endedAt = this.now()),
      () => this.readings.get(id) === fresh && this.readings.delete(id),
    );
    return fresh.result;
  }

  /** Takes one read from the trigger's bucket, refilled for the time since it was last used. */
  private take(triggerId: string, now: number): boolean {
    const { budget, refillMs } = this.limits;
    const bucket = this.buckets.get(triggerId) ?? { tokens: budget, at: now };
    bucket.tokens = Math.min(budget, bucket.tokens + ((now - bucket.at) * budget) / refillMs);
    bucket.at = now;
    this.buckets.set(triggerId, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Drops reads past their reuse (the map holds at most a budget's worth per trigger and reuse time). */
  private forgetOld(now: number): void {
    for (const [id, reading] of this.readings) if (reading.endedAt !== undefined && now - reading.endedAt >= this.limits.reuseMs) this.readings.delete(id);
  }
}
