// Pacing of `run`, `logs` and `snapshot` events, with a fake clock.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLine, Run, Snapshot } from '../../src/core/api';
import { EventPacer, logEventInterval, runEventInterval, snapshotInterval, type Timers } from '../../src/engine/pacer';
import { EventHub } from '../../src/engine/events';

function fakeTimers() {
  let now = 0;
  let timers: { at: number; callback: () => void; handle: number }[] = [];
  let nextHandle = 1;
  const api: Timers = {
    setTimeout(callback, ms) {
      const handle = nextHandle++;
      timers.push({ at: now + ms, callback, handle });
      return handle;
    },
    clearTimeout(handle) {
      timers = timers.filter((timer) => timer.handle !== handle);
    },
    now: () => now,
  };
  return {
    api,
    advance(ms: number) {
      now += ms;
      for (const timer of timers.filter((candidate) => candidate.at <= now)) {
        timers = timers.filter((candidate) => candidate !== timer);
        timer.callback();
      }
    },
  };
}

const run = (id: string, status: Run['status']): Run => ({ id, status } as Run);
const line = (text: string): LogLine => ({ runId: 'run_a', stepId: 's', attempt: 1, line: text });

const pacer = suite('event pacer');

pacer('coalesces run changes per run inside the window; the latest state wins', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const events: Run[] = [];
  hub.on('run', (payload) => events.push(payload));
  const paced = new EventPacer(hub, clock.api);
  paced.runChanged('run_a', () => run('run_a', 'queued'));
  paced.runChanged('run_a', () => run('run_a', 'running'));
  paced.runChanged('run_b', () => run('run_b', 'queued'));
  paced.runChanged('run_a', () => run('run_a', 'succeeded'));
  clock.advance(runEventInterval - 1);
  assert.equal(events, []);
  clock.advance(1);
  assert.equal(events.map((event) => `${event.id}:${event.status}`), ['run_a:succeeded', 'run_b:queued']);
  paced.runChanged('run_a', () => run('run_a', 'failed'));
  clock.advance(runEventInterval);
  assert.equal(events.map((event) => event.status), ['succeeded', 'queued', 'failed']);
});

pacer('batches log lines in order, once per window', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const batches: LogLine[][] = [];
  hub.on('logs', (payload) => batches.push(payload));
  const paced = new EventPacer(hub, clock.api);
  paced.log([line('1'), line('2')]);
  paced.log([line('3')]);
  clock.advance(logEventInterval - 1);
  assert.is(batches.length, 0);
  clock.advance(1);
  assert.equal(batches.map((batch) => batch.map((entry) => entry.line)), [['1', '2', '3']]);
  paced.log([line('4')]);
  clock.advance(logEventInterval);
  assert.equal(batches.length, 2);
});

pacer('flush sends what is pending at once, and a forgotten run sends nothing', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const runs: Run[] = [];
  const logs: LogLine[][] = [];
  hub.on('run', (payload) => runs.push(payload));
  hub.on('logs', (payload) => logs.push(payload));
  const paced = new EventPacer(hub, clock.api);
  paced.runChanged('run_gone', () => run('run_gone', 'succeeded'));
  paced.forgetRun('run_gone');
  paced.runChanged('run_kept', () => run('run_kept', 'failed'));
  paced.log([line('last')]);
  paced.flush();
  assert.equal(runs.map((event) => event.id), ['run_kept']);
  assert.equal(logs.flat().map((entry) => entry.line), ['last']);
  clock.advance(1000);
  assert.is(runs.length, 1, 'no second event after flush');
});

pacer('a snapshot goes out at once after a quiet spell, then at most one per interval, always after the last change', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const seen: number[] = [];
  hub.on('snapshot', (payload) => seen.push((payload as unknown as { version: number }).version));
  const paced = new EventPacer(hub, clock.api);
  let version = 1;
  const view = () => ({ version } as unknown as Snapshot);
  clock.advance(1000);
  paced.snapshotChanged(view);
  clock.advance(0);
  assert.equal(seen, [1], 'the first change of a quiet spell is sent at once');
  for (version = 2; version <= 5; version += 1) {
    paced.snapshotChanged(view);
    clock.advance(10);
  }
  version = 5;
  assert.equal(seen, [1], 'changes within the interval wait');
  clock.advance(snapshotInterval - 40);
  assert.equal(seen, [1, 5], 'one snapshot for the burst, with the latest state');
  clock.advance(snapshotInterval * 2);
  assert.equal(seen, [1, 5], 'nothing more without a change');
});

pacer('a listener that throws does not silence the others', () => {
  const hub = new EventHub();
  const seen: string[] = [];
  const originalError = console.error;
  console.error = () => undefined;
  try {
    hub.on('run-deleted', () => {
      throw new Error('broken door');
    });
    hub.on('run-deleted', (id) => seen.push(id));
    hub.emit('run-deleted', 'run_x');
  } finally {
    console.error = originalError;
  }
  assert.equal(seen, ['run_x']);
});

pacer.run();
