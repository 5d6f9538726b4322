// Timers whose delay is computed (a rate limit's reset, a service's Retry-After, a step's timeout).
// Node's setTimeout takes at most 2^31-1 ms (about 24.8 days): asked for more, or for NaN, it
// fires after 1 ms, so a service that says "try again in 30 days" would be asked again at once,
// thousands of times. Every computed delay in src/ goes through `setTimer`.

/** The longest delay setTimeout honours: 2^31-1 ms, about 24.8 days. */
export const longestTimerMs = 2 ** 31 - 1;

/**
 * `delayMs` as a timer can wait for it: NaN and negative delays become 0, fractions are rounded up,
 * and a delay over `longestTimerMs` becomes that (the timer fires early; a caller that waits longer
 * checks the time when it fires and waits again).
 */
export function timerDelay(delayMs: number): number {
  if (!(delayMs > 0)) return 0;
  return Math.min(Math.ceil(delayMs), longestTimerMs);
}

/** setTimeout with its delay clamped by `timerDelay`. */
export function setTimer(callback: () => void, delayMs: number): ReturnType<typeof setTimeout> {
  return setTimeout(callback, timerDelay(delayMs));
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimer(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
