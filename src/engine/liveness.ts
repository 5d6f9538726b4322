// How a running agent step is doing, in one word (issue 24.4): `working` while it printed something
// within the last minute, `quiet` after that, `stalled` once it printed nothing for its stall time.
// (`rateLimited` is set by the run service while a step waits out the model's usage limit.) The word
// is reported only when it changes, never per line: a busy agent costs one comparison a line.

import type { StepLiveness } from '../core/api';

/** No output for this long: `quiet`. */
export const quietAfterMs = 60_000;

export interface LivenessReport {
  liveness: StepLiveness;
  /** Since when: the last output (quiet, stalled) or the output that ended a silence (working). */
  since: number;
}

/** The word for a step whose last output was at `lastOutputAt`. */
export function livenessAt(lastOutputAt: number, now: number, stallMs: number): Exclude<StepLiveness, 'rateLimited'> {
  const silentMs = now - lastOutputAt;
  if (silentMs >= stallMs) return 'stalled';
  return silentMs >= Math.min(quietAfterMs, stallMs) ? 'quiet' : 'working';
}

/**
 * Follows one process's output. `output()` on every line (cheap: it reports only when the word
 * was not already `working`); `check()` on a timer says whether the silence has become quiet or
 * stalled and returns the word. `report` hears each change, starting with `working` at creation.
 */
export class LivenessTracker {
  private lastOutputAt: number;
  private current: Exclude<StepLiveness, 'rateLimited'> = 'working';

  constructor(
    private readonly options: { now: () => number; stallMs: number; report: (report: LivenessReport) => void },
  ) {
    this.lastOutputAt = options.now();
    options.report({ liveness: 'working', since: this.lastOutputAt });
  }

  /** The process printed a line. */
  output(): void {
    this.lastOutputAt = this.options.now();
    if (this.current !== 'working') this.change('working', this.lastOutputAt);
  }

  /** The word now (reported when it changed). */
  check(): Exclude<StepLiveness, 'rateLimited'> {
    const word = livenessAt(this.lastOutputAt, this.options.now(), this.options.stallMs);
    if (word !== this.current) this.change(word, this.lastOutputAt);
    return word;
  }

  /** When the process last printed. */
  get lastOutput(): number {
    return this.lastOutputAt;
  }

  private change(word: Exclude<StepLiveness, 'rateLimited'>, since: number): void {
    this.current = word;
    this.options.report({ liveness: word, since });
  }
}
