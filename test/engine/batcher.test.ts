// Pacing of `run` and `logs` events, with a fake clock.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLine, Run } from '../../src/core/api';
import { EventBatcher, logEventInterval, runEventInterval, type Timers } from '../../src/engine/batcher';
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

const batcher = suite('event batcher');

batcher('coalesces run changes per run inside the window; the latest state wins', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const events: Run[] = [];
  hub.on('run', (payload) => events.push(payload));
  const paced = new EventBatcher(hub, clock.api);
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

batcher('batches log lines in order, once per window', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const batches: LogLine[][] = [];
  hub.on('logs', (payload) => batches.push(payload));
  const paced = new EventBatcher(hub, clock.api);
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

batcher('flush sends what is pending at once, and a forgotten run sends nothing', () => {
  const hub = new EventHub();
  const clock = fakeTimers();
  const runs: Run[] = [];
  const logs: LogLine[][] = [];
  hub.on('run', (payload) => runs.push(payload));
  hub.on('logs', (payload) => logs.push(payload));
  const paced = new EventBatcher(hub, clock.api);
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

batcher('a listener that throws does not silence the others', () => {
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

batcher.run();
