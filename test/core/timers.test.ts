// Timers with computed delays: a delay setTimeout cannot honour is clamped, never left to fire at once.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { longestTimerMs, setTimer, timerDelay } from '../../src/core/timers';

const timers = suite('timers');
const day = 86_400_000;

timers('a delay beyond 2^31-1 ms becomes the longest one; NaN and negative delays become 0', () => {
  assert.is(longestTimerMs, 2_147_483_647);
  assert.is(timerDelay(30 * day), longestTimerMs);
  assert.is(timerDelay(Number.POSITIVE_INFINITY), longestTimerMs);
  assert.is(timerDelay(longestTimerMs), longestTimerMs);
  assert.is(timerDelay(3600_000), 3600_000);
  assert.is(timerDelay(1.2), 2);
  assert.is(timerDelay(-5), 0);
  assert.is(timerDelay(Number.NaN), 0);
});

timers('a timer set 30 days ahead is not one Node turns into 1 ms', async () => {
  // Node warns (TimeoutOverflowWarning) exactly when it replaces a delay it cannot honour by 1 ms.
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    let fired = false;
    const timer = setTimer(() => (fired = true), 30 * day);
    clearTimeout(timer);
    // The warning is emitted on the next tick; wait past it.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings, []);
    assert.is(fired, false);
  } finally {
    process.off('warning', onWarning);
  }
});

timers.run();
