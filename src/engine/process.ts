// Runs one step's process (a shell step's `/bin/sh -c`, an agent CLI): starts it leading its own
// process group, streams its output, and resolves when the step is over. A step ends when its main
// process ends; cancel, interrupt and timeout end it sooner. What it leaves running is stopped by
// process-stop.ts, which this file tells when.

import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { quote } from '../core/errors';
import { longestTimerMs, setTimer } from '../core/timers';
import { LineSplitter, OutputTail } from './lines';
import { StepCgroup } from './cgroup';
import { DescendantTracker } from './descendants';
import { createProcessMarker } from './process-marker';
import { GROUP_CHECK_MS, Leftovers, describeValue, killProcessGroup, isProcessGroupAlive, sendSignal, signalProcess } from './process-stop';
import { describeSpawnError } from './spawn-error';

const DEFAULT_KILL_GRACE_MS = 5000;
const DEFAULT_INTERRUPT_GRACE_MS = 10_000;
const DEFAULT_OUTPUT_LIMIT = 1_048_576;
/**
 * Once nothing of the group is left to signal (it was empty, or SIGKILL went out), how long the
 * output pipes may stay open before we stop reading them: only a process that left the group can
 * still hold them, and the step must not wait for it.
 */
const PIPE_DRAIN_MS = 500;
/**
 * How often a step's process tree is looked at where there is no cgroup: a process whose parent
 * dies sooner than this after starting it may be missed (see descendants.ts).
 */
const DESCENDANT_POLL_MS = 100;
/** How long after the stop began an emptied step cgroup may take to be removed, beyond two grace periods. */
const CGROUP_REMOVAL_MS = 5000;

export interface RunProcessOptions {
  /** The executable (`/bin/sh`, `claude`); it is never run through a shell by this module. */
  command: string;
  args: readonly string[];
  cwd: string;
  /**
   * The complete environment: nothing of this process's environment is added, except the marker
   * FACTORY_PROCESS_MARKER (random, new for each call) that finds the processes that left the group.
   */
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Milliseconds until the whole group is stopped and `timedOut` set; absent or Infinity: none. */
  timeoutMs?: number;
  /** Aborting it cancels: the whole group is stopped and `cancelled` set. */
  signal?: AbortSignal;
  /** Milliseconds between SIGTERM and SIGKILL (default 5000). */
  killGraceMs?: number;
  /**
   * Aborting it asks the process to stop on its own, as Ctrl-C would: SIGINT to the group, then,
   * if the main process still runs `interruptGraceMs` later, the stop of a cancel (SIGTERM, SIGKILL
   * after `killGraceMs`), without setting `cancelled`. A budget pause uses it (engine/budget.ts).
   */
  interrupt?: AbortSignal;
  /** Milliseconds between SIGINT and SIGTERM after `interrupt` (default 10000). */
  interruptGraceMs?: number;
  /** Longest line handed to onLine, in UTF-16 code units; longer lines come in pieces (default 16384). */
  maxLineLength?: number;
  /** Bytes of stdout kept as `output`, the last ones (default 1 MiB). */
  outputLimit?: number;
  /** Each line of stdout ('out') and stderr ('err') as it arrives; see LineSplitter for the cleaning. */
  onLine?: (line: string, stream: 'out' | 'err') => void;
  /**
   * The output's bytes as they arrive, unsplit (a step's log keeps them as they are). A promise
   * returned pauses that stream until it settles: the child waits for a slow disk, not our memory.
   */
  onChunk?: (chunk: Buffer, stream: 'out' | 'err') => Promise<void> | void;
  /** Called once the process has started, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
  /**
   * Put the process in a cgroup of its own where Linux lets Factory make one (default true); false
   * follows its descendants through /proc instead, as where there is no such cgroup (tests).
   */
  useCgroup?: boolean;
  /** Starts the process (default node's spawn). Tests pass a wrapper to see whether anything was started. */
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  /**
   * Sends a signal, like process.kill: a negative pid is a process group (default process.kill).
   * Every signal the call sends goes through it, except the SIGKILL a cgroup gets as a whole.
   * Tests pass a wrapper to see which processes a cleanup signals.
   */
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

export interface ProcessResult {
  /** The main process's exit code; null when a signal ended it or it never started. */
  exitCode: number | null;
  /** The signal that ended the main process, if one did. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The last `outputLimit` bytes of stdout as UTF-8 text (raw: control characters kept). */
  output: string;
  /** True when stdout was longer than `outputLimit`, so `output` is only its end. */
  outputTruncated: boolean;
  /** Why the process could not start (`command not found: \`foo\``); the promise still resolves. */
  spawnError?: string;
  durationMs: number;
}

/**
 * Runs `command` with `args` in its own process group and resolves when the step is over: its main
 * process has exited and its output pipes are closed (or cut, see PIPE_DRAIN_MS). Never rejects for
 * anything the child does: a command that cannot start resolves with `spawnError`. When the signal
 * is already aborted nothing is started. Rejects with RangeError for out-of-range options (an empty
 * command, a negative timeout, grace period, output limit, or a maxLineLength below 2).
 *
 * When the result arrives, every process of the group has been sent SIGTERM; if any of them (a
 * zombie included) still exists after `killGraceMs`, SIGKILL follows, even after resolving. On
 * Linux, so has every process that left the group (`setsid`, a double fork) and is still in the
 * call's cgroup, or was seen as a descendant, or carries the call's marker; those found again once
 * the group is gone or killed are sent SIGTERM too, and what is left `killGraceMs` after a SIGTERM
 * gets SIGKILL (the whole cgroup at once, where there is one).
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  checkOptions(options);
  const cgroup = options.useCgroup !== false && process.platform === 'linux' && !options.signal?.aborted ? await StepCgroup.create() : undefined;
  return new Promise((resolve) => execute(options, cgroup, resolve));
}


function execute(options: RunProcessOptions, madeCgroup: StepCgroup | undefined, resolve: (result: ProcessResult) => void): void {
  const started = performance.now();
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const tail = new OutputTail(options.outputLimit ?? DEFAULT_OUTPUT_LIMIT);
  const abortSignal = options.signal;
  const kill = options.kill ?? sendSignal;

  let exitCode: number | null = null;
  let exitSignal: NodeJS.Signals | null = null;
  let timedOut = false;
  let cancelled = false;
  let leaderExited = false;
  let stopping = false;
  let settled = false;
  let openPipes = 0;
  let timeoutTimer: NodeJS.Timeout | undefined;
  let interruptTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let child: ChildProcess | undefined;
  const marker = createProcessMarker();
  let cgroup = madeCgroup;
  let descendants: DescendantTracker | undefined;
  let leftovers = new Leftovers(marker.entry, killGraceMs, kill);
  /** Sweeps for escaped processes under way that the result waits for. */
  let sweeping = 0;

  const finish = (spawnError?: string): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timeoutTimer);
    clearTimeout(drainTimer);
    clearTimeout(interruptTimer);
    abortSignal?.removeEventListener('abort', onAbort);
    options.interrupt?.removeEventListener('abort', onInterrupt);
    const result: ProcessResult = {
      exitCode,
      signal: exitSignal,
      timedOut,
      cancelled,
      output: tail.text(),
      outputTruncated: tail.truncated,
      durationMs: Math.round(performance.now() - started),
    };
    if (spawnError !== undefined) result.spawnError = spawnError;
    resolve(result);
  };

  const maybeFinish = (): void => {
    if (leaderExited && openPipes === 0 && sweeping === 0) finish();
  };

  /** Signals the group, and the leader directly in case it moved to another group. */
  const signalAll = (signal: NodeJS.Signals): boolean => {
    const pid = child?.pid;
    if (pid === undefined) return false;
    const reachedGroup = killProcessGroup(pid, signal, kill);
    const reachedLeader = !leaderExited && !reachedGroup && signalProcess(kill, pid, signal);
    return reachedGroup || reachedLeader;
  };

  /**
   * SIGTERM now; SIGKILL after the grace period unless the group is gone by then (checked every
   * GROUP_CHECK_MS once the leader exited). These timers outlive the result when a leftover process
   * is still there. Once nothing is left to signal, the pipes get PIPE_DRAIN_MS to close.
   * The processes that left the group are sent SIGTERM right after it (the result waits for that),
   * and again once the group is handled, for any that left it while it was stopping. Where the
   * descendants are followed, the tree is looked at once more first: the group's signal ends the
   * parents that link their children to the step.
   */
  const stopGroup = (): void => {
    if (stopping) return;
    stopping = true;
    const pid = child?.pid;
    if (pid === undefined) {
      startDrain();
      return;
    }
    sweeping += 1;
    descendants?.stopPolling();
    void (descendants?.update() ?? Promise.resolve()).then(() => signalGroupAndLeftovers(pid));
    if (cgroup) void cgroup.removeWhenEmpty(2 * killGraceMs + CGROUP_REMOVAL_MS);
  };

  const signalGroupAndLeftovers = (pid: number): void => {
    const groupSignalled = signalAll('SIGTERM');
    void leftovers.terminate(pid).then(() => {
      sweeping -= 1;
      maybeFinish();
    });
    if (!groupSignalled) {
      startDrain();
      return;
    }
    const killTimer = setTimeout(() => {
      clearInterval(groupCheck);
      signalAll('SIGKILL');
      void leftovers.terminate(pid);
      startDrain();
    }, killGraceMs);
    const groupCheck = setInterval(() => {
      if (!leaderExited || isProcessGroupAlive(pid)) return;
      clearTimeout(killTimer);
      clearInterval(groupCheck);
      void leftovers.terminate(pid);
      startDrain();
    }, GROUP_CHECK_MS);
  };

  const startDrain = (): void => {
    if (settled || drainTimer || openPipes === 0) return;
    drainTimer = setTimeout(() => {
      // One more turn of the event loop first, so bytes already waiting in the pipes are read.
      setImmediate(() => {
        if (settled) return;
        child?.stdout?.destroy();
        child?.stderr?.destroy();
      });
    }, PIPE_DRAIN_MS);
  };

  function onAbort(): void {
    if (settled || leaderExited || stopping) return;
    cancelled = true;
    stopGroup();
  }

  /** SIGINT first; the whole stop if the main process is still there after the grace. */
  function onInterrupt(): void {
    if (settled || leaderExited || stopping) return;
    signalAll('SIGINT');
    interruptTimer = setTimer(() => {
      if (!settled && !leaderExited) stopGroup();
    }, options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS);
  }

  if (abortSignal?.aborted) {
    cancelled = true;
    if (cgroup) dropCgroup(cgroup);
    finish();
    return;
  }

  let spawned: ChildProcess;
  try {
    const start = (): ChildProcess =>
      (options.spawn ?? spawn)(options.command, [...options.args], {
        cwd: options.cwd,
        env: { ...options.env, [marker.name]: marker.value },
        detached: true,
        stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    if (cgroup) {
      const started = cgroup.startInside(start);
      spawned = started.value;
      if (!started.inside) cgroup = dropCgroup(cgroup);
    } else {
      spawned = start();
    }
  } catch (error) {
    if (cgroup) dropCgroup(cgroup);
    finish(describeSpawnError(error, options.command, options.cwd));
    return;
  }

  if (spawned.pid === undefined && cgroup) cgroup = dropCgroup(cgroup);
  // Without a cgroup the child's tree is followed from now on, before it can have gone far.
  if (spawned.pid !== undefined && !cgroup) {
    descendants = DescendantTracker.start(spawned.pid);
    void descendants?.update();
    descendants?.poll(DESCENDANT_POLL_MS);
  }
  leftovers = new Leftovers(marker.entry, killGraceMs, kill, cgroup, descendants);

  child = spawned;
  spawned.on('error', (error) => {
    // Errors after a successful start (a failed kill) change nothing: exit and close still come.
    if (spawned.pid === undefined) finish(describeSpawnError(error, options.command, options.cwd));
  });
  if (spawned.pid === undefined) return; // the 'error' event above reports why
  options.onSpawn?.(spawned.pid);

  const deliver = lineDelivery(options.onLine);
  for (const [stream, name] of [[spawned.stdout, 'out'], [spawned.stderr, 'err']] as const) {
    if (!stream) continue;
    openPipes += 1;
    const splitter = deliver ? new LineSplitter((line) => deliver(line, name), options.maxLineLength) : undefined;
    stream.on('data', (chunk: Buffer) => {
      if (name === 'out') tail.push(chunk);
      splitter?.push(chunk);
      const wait = options.onChunk?.(chunk, name);
      if (wait) {
        stream.pause();
        void wait.finally(() => stream.resume());
      }
    });
    stream.on('close', () => {
      splitter?.end();
      openPipes -= 1;
      maybeFinish();
    });
  }

  if (spawned.stdin && options.stdin !== undefined) {
    // A child that exits without reading its input makes the write fail (EPIPE): that is its business.
    spawned.stdin.on('error', () => {});
    spawned.stdin.end(options.stdin);
  }

  spawned.on('exit', (code, signal) => {
    exitCode = code;
    exitSignal = signal;
    leaderExited = true;
    clearTimeout(timeoutTimer);
    stopGroup();
    maybeFinish();
  });

  abortSignal?.addEventListener('abort', onAbort, { once: true });
  if (options.interrupt?.aborted) onInterrupt();
  else options.interrupt?.addEventListener('abort', onInterrupt, { once: true });

  const timeoutMs = options.timeoutMs;
  if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
    const deadline = performance.now() + timeoutMs;
    const checkDeadline = (): void => {
      const remaining = deadline - performance.now();
      if (remaining > 0) {
        timeoutTimer = setTimer(checkDeadline, remaining); // a timeout longer than a timer's longest is waited for in steps
      } else if (!settled && !leaderExited && !stopping) {
        timedOut = true;
        stopGroup();
      }
    };
    timeoutTimer = setTimer(checkDeadline, timeoutMs);
  }
}


/** Removes a cgroup no process was started in; answers undefined, the cgroup the step has then. */
function dropCgroup(cgroup: StepCgroup): undefined {
  void cgroup.removeWhenEmpty(0);
  return undefined;
}


/** Wraps onLine so that a listener that throws is reported once and does not break the run. */
function lineDelivery(onLine: RunProcessOptions['onLine']): ((line: string, stream: 'out' | 'err') => void) | undefined {
  if (!onLine) return undefined;
  let reported = false;
  return (line, stream) => {
    try {
      onLine(line, stream);
    } catch (error) {
      if (!reported) console.error('A process output listener failed:', error);
      reported = true;
    }
  };
}


function checkOptions(options: RunProcessOptions): void {
  if (typeof options.command !== 'string' || options.command.length === 0) {
    throw new RangeError(`The command must be a non-empty string, got ${quote(options.command)}`);
  }
  const { timeoutMs, killGraceMs, outputLimit, maxLineLength } = options;
  if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be 0 or more, got ${describeValue(timeoutMs)}`);
  if (killGraceMs !== undefined && !(killGraceMs >= 0 && killGraceMs <= longestTimerMs)) {
    throw new RangeError(`killGraceMs must be between 0 and ${longestTimerMs}, got ${describeValue(killGraceMs)}`);
  }
  if (outputLimit !== undefined && !(Number.isInteger(outputLimit) && outputLimit >= 0)) {
    throw new RangeError(`outputLimit must be a whole number of bytes, got ${describeValue(outputLimit)}`);
  }
  if (maxLineLength !== undefined && !(Number.isInteger(maxLineLength) && maxLineLength >= 2)) {
    throw new RangeError(`maxLineLength must be an integer of at least 2, got ${describeValue(maxLineLength)}`);
  }
}