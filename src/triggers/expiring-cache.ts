// What a service said about someone (a reviewer's permission, a Linear user), trusted for a while:
// asked again once older than the cache's lifetime, so a change on the service counts soon.

/** Answers kept per key for `lifetimeMs`; once 1,000 are kept, the expired ones are dropped. */
export class ExpiringCache<Value> {
  private readonly entries = new Map<string, { at: number; value: Value }>();

  constructor(private readonly lifetimeMs: number) {}

  /** The value kept for `key` when younger than the lifetime, else what `read` answers now (kept; a failed read is not). */
  async get(key: string, read: () => Promise<Value>): Promise<Value> {
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached && now - cached.at < this.lifetimeMs) return cached.value;
    const value = await read();
    if (this.entries.size >= 1000) for (const [old, entry] of this.entries) if (now - entry.at >= this.lifetimeMs) this.entries.delete(old);
    this.entries.set(key, { at: now, value });
    return value;
  }
}
