// What agents spent per local calendar day, in US dollars (issue 24.2): `<data>/spend.json`,
// `{ "days": { "2026-11-27": 1.24 } }`, the last 31 days. Kept in memory and written atomically at
// most once a second while spending goes on (and at `flush`), so a restart keeps the day's figure
// within about a second of spending; a day's key is the local date at the moment of spending.

import { setTimer } from '../core/timers';
import { readJsonFile } from './json-file';
import type { FileWriter } from './writer';

/** How many days are kept. */
const keptDays = 31;
/** The longest wait between a change and its write. */
const writeDelayMs = 1000;

/** The local calendar day of `at` as YYYY-MM-DD. */
export function localDay(at: number): string {
  const date = new Date(at);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

export class SpendFile {
  private readonly days = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(private readonly path: string | undefined, private readonly writer: FileWriter | undefined) {}

  /**
   * The spend recorded at `path` (none when the file is absent; a corrupt file throws CorruptFileError
   * naming it). Without `path` the figures live in memory only (tests of the run service alone).
   */
  static async open(path?: string, writer?: FileWriter): Promise<SpendFile> {
    const file = new SpendFile(path, writer);
    const stored = path ? await readJsonFile<{ days?: Record<string, unknown> }>(path) : undefined;
    for (const [day, amount] of Object.entries(stored?.days ?? {})) {
      if (/^\d{4}-\d\d-\d\d$/.test(day) && typeof amount === 'number' && Number.isFinite(amount) && amount >= 0) file.days.set(day, amount);
    }
    return file;
  }

  /** Figures kept in memory only (a run service on its own, in tests). */
  static inMemory(): SpendFile {
    return new SpendFile(undefined, undefined);
  }

  /** Dollars spent on the local day of `at`. */
  spentOn(at: number): number {
    return this.days.get(localDay(at)) ?? 0;
  }

  /** Adds `usd` (negative for a correction; the day never goes below 0) to the day of `at`. */
  add(usd: number, at: number): void {
    if (!Number.isFinite(usd) || usd === 0) return;
    const day = localDay(at);
    this.days.set(day, Math.max(0, (this.days.get(day) ?? 0) + usd));
    if (this.path && !this.timer) {
      this.timer = setTimer(() => {
        this.timer = undefined;
        void this.write().catch((error) => console.error(`Writing ${this.path} failed: ${(error as Error).message}`));
      }, writeDelayMs);
      this.timer.unref?.();
    }
  }

  /** Writes what is not written yet. */
  async flush(): Promise<void> {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.write();
  }

  private write(): Promise<void> {
    const kept = [...this.days.keys()].sort().slice(-keptDays);
    const days = Object.fromEntries(kept.map((day) => [day, Math.round(this.days.get(day)! * 1e6) / 1e6]));
    return this.writer!.write(this.path!, JSON.stringify({ days }, null, 2) + '\n');
  }
}
