// How the run store paces its asynchronous work: a bounded loop over many items, tasks taking
// turns a few at a time, and the promises under way per run (so a delete or a read can wait for them).

/** Calls `work` on each item, at most `concurrency` at a time; rejects with the first failure. */
export async function forEachBounded<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** At most `limit` tasks at once; the others wait their turn, first come first served. */
export class Turns {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running += 1;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}

/** Promises under way, by key (a run id); waiting on them never rejects. */
export class PendingWork {
  readonly #pending = new Map<string, Set<Promise<unknown>>>();

  /** Registers `promise` under `key` until it settles; returns it unchanged. */
  track<T>(key: string, promise: Promise<T>): Promise<T> {
    let set = this.#pending.get(key);
    if (!set) {
      set = new Set();
      this.#pending.set(key, set);
    }
    set.add(promise);
    const forget = () => {
      set.delete(promise);
      if (set.size === 0 && this.#pending.get(key) === set) this.#pending.delete(key);
    };
    promise.then(forget, forget);
    return promise;
  }

  /** True while something under `key` has not settled. */
  has(key: string): boolean {
    return this.#pending.has(key);
  }

  /**
   * Resolves once what is under `key` now has settled; what is added later is not waited for, so
   * a run that keeps logging cannot keep a reader waiting.
   */
  async settled(key: string): Promise<void> {
    const set = this.#pending.get(key);
    if (set) await Promise.allSettled([...set]);
  }

  /** Resolves once everything under every key, including what is added while waiting, has settled. */
  async settledAll(): Promise<void> {
    while (this.#pending.size > 0) {
      await Promise.allSettled([...this.#pending.values()].flatMap((set) => [...set]));
    }
  }
}
