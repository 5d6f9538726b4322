// runProcess with real processes: exit codes, lines, process groups, kills, limits and spawn errors.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { findOwnCgroupFolder, StepCgroup } from '../../src/engine/cgroup';
import { runProcess, type ProcessResult, type RunProcessOptions } from '../../src/engine/process';
import { isProcessGroupAlive, killProcessGroup } from '../../src/engine/process-stop';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

interface Context {
  dir: string;
  /** Pids the scripts printed: killed after each test, whatever happened. */
  pids: number[];
}

const processes = suite<Context>('process');

processes.before.each((context) => {
  context.dir = makeTempDir('factory-process');
  context.pids = [];
});

processes.after.each((context) => {
  for (const pid of context.pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  removeTempDir(context.dir);
});

const PATH = process.env.PATH ?? '/usr/bin:/bin';

interface Collected {
  result: ProcessResult;
  out: string[];
  err: string[];
}

/** Runs `script` with /bin/sh -c, collecting lines by stream; a line `pid <n>` is recorded for cleanup. */
async function runShell(context: Context, script: string, options: Partial<RunProcessOptions> = {}): Promise<Collected> {
  const out: string[] = [];
  const err: string[] = [];
  const { onLine: alsoOnLine, ...rest } = options;
  const result = await failAfter(20_000, runProcess({
    command: '/bin/sh',
    args: ['-c', script],
    cwd: context.dir,
    env: { PATH },
    ...rest,
    onLine: (line, stream) => {
      (stream === 'out' ? out : err).push(line);
      const pid = /^pid (\d+)$/.exec(line)?.[1];
      if (pid) context.pids.push(Number(pid));
      alsoOnLine?.(line, stream);
    },
  }));
  return { result, out, err };
}

/** Rejects when `promise` takes longer than `timeoutMs`, so a run that never ends fails its test instead of hanging. */
async function failAfter<T>(timeoutMs: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not end within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** A process is gone when kill(pid, 0) fails, or when only its zombie is left for init to reap. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

function pidsPrinted(lines: string[]): number[] {
  return lines.flatMap((line) => /^pid (\d+)$/.exec(line)?.[1] ?? []).map(Number);
}

async function assertAllGone(pids: number[], timeoutMs = 1500): Promise<void> {
  await waitFor(() => pids.every((pid) => !isRunning(pid)), timeoutMs, `processes ${pids.join(', ')} to be gone`);
}

interface SentSignal {
  /** As given to kill: negative for a process group. */
  pid: number;
  signal: NodeJS.Signals;
  /** Whether it reached a process (kill did not fail). */
  delivered: boolean;
}

/** A `kill` for runProcess that sends each signal for real and records it in `sent`. */
function recordingKill(): { kill: (pid: number, signal: NodeJS.Signals) => void; sent: SentSignal[] } {
  const sent: SentSignal[] = [];
  const kill = (pid: number, signal: NodeJS.Signals): void => {
    try {
      process.kill(pid, signal);
    } catch (error) {
      sent.push({ pid, signal, delivered: false });
      throw error;
    }
    sent.push({ pid, signal, delivered: true });
  };
  return { kill, sent };
}

processes('reports exit codes 0 and 3', async (context) => {
  assert.is((await runShell(context, 'exit 0')).result.exitCode, 0);
  const failed = await runShell(context, 'exit 3');
  assert.is(failed.result.exitCode, 3);
  assert.is(failed.result.signal, null);
  assert.is(failed.result.timedOut, false);
  assert.is(failed.result.cancelled, false);
});

processes('delivers stdout and stderr lines on their own stream, in order, with \\r\\n handled', async (context) => {
  const script = "printf 'one\\r\\ntwo\\n'; echo warn1 >&2; echo three; echo warn2 >&2; printf 'last without newline'";
  const { result, out, err } = await runShell(context, script);
  assert.equal(out, ['one', 'two', 'three', 'last without newline']);
  assert.equal(err, ['warn1', 'warn2']);
  assert.is(result.output, 'one\r\ntwo\nthree\nlast without newline');
  assert.is(result.outputTruncated, false);
});

processes('cancelling stops the whole group, background grandchildren included', async (context) => {
  const controller = new AbortController();
  const script = 'echo "pid $$"; sleep 300 & echo "pid $!"; sleep 300 & echo "pid $!"; echo started; wait';
  let groupAliveWhileRunning = false;
  const { result, out } = await runShell(context, script, {
    signal: controller.signal,
    onLine: (line) => {
      if (line !== 'started') return;
      groupAliveWhileRunning = isProcessGroupAlive(Number(context.pids[0]));
      controller.abort();
    },
  });
  assert.is(groupAliveWhileRunning, true, 'the script leads its own group');
  assert.is(result.cancelled, true);
  assert.is(result.exitCode, null);
  assert.is(result.signal, 'SIGTERM');
  const pids = pidsPrinted(out);
  assert.is(pids.length, 3);
  await assertAllGone(pids);
});

processes('a process that ignores SIGTERM is killed with SIGKILL after the grace period', async (context) => {
  const controller = new AbortController();
  const script = "trap '' TERM; echo \"pid $$\"; sleep 300 & echo \"pid $!\"; echo started; wait";
  const { result, out } = await runShell(context, script, {
    signal: controller.signal,
    killGraceMs: 300,
    onLine: (line) => {
      if (line === 'started') controller.abort();
    },
  });
  assert.is(result.cancelled, true);
  assert.is(result.signal, 'SIGKILL');
  await assertAllGone(pidsPrinted(out));
});

processes('a timeout stops a long command and its group', async (context) => {
  // The script waits for a 300 s sleep: a run that waited too would outlast runShell's limit and the file's.
  const signals = recordingKill();
  let leader = 0;
  const { result, out } = await runShell(context, 'echo "pid $$"; sleep 300 & echo "pid $!"; wait', {
    timeoutMs: 300,
    killGraceMs: 300,
    kill: signals.kill,
    onSpawn: (pid) => (leader = pid),
  });
  assert.is(result.timedOut, true);
  assert.is(result.cancelled, false);
  assert.is(result.signal, 'SIGTERM', 'the shell, still waiting for the sleep, was stopped');
  assert.ok(signals.sent.some(({ pid, signal, delivered }) => pid === -leader && signal === 'SIGTERM' && delivered), JSON.stringify(signals.sent));
  await assertAllGone(pidsPrinted(out));
});

processes('when the main process exits, what it left running in the background is stopped', async (context) => {
  // The background sleep holds stdout open for 300 s: a run that waited for it would outlast
  // runShell's limit and the file's. It ends because Factory stops the sleep.
  const signals = recordingKill();
  let leader = 0;
  const { result, out } = await runShell(context, 'sleep 300 & echo "pid $!"; echo done', {
    killGraceMs: 300,
    kill: signals.kill,
    onSpawn: (pid) => (leader = pid),
  });
  assert.is(result.exitCode, 0);
  assert.is(result.timedOut, false);
  assert.is(result.cancelled, false);
  assert.equal(out.at(-1), 'done');
  // The shell had exited: the group's SIGTERM reached the sleep, still running then.
  assert.ok(signals.sent.some(({ pid, signal, delivered }) => pid === -leader && signal === 'SIGTERM' && delivered), JSON.stringify(signals.sent));
  await assertAllGone(pidsPrinted(out));
});

processes('a leftover that closed its output and ignores SIGTERM is still killed after the grace period', async (context) => {
  const script = "(trap '' TERM; exec sleep 300) >/dev/null 2>&1 & echo \"pid $!\"; echo done";
  const { result, out } = await runShell(context, script, { killGraceMs: 300 });
  assert.is(result.exitCode, 0);
  const pids = pidsPrinted(out);
  assert.is(pids.length, 1);
  await assertAllGone(pids, 3000);
});

processes('a process that left the group does not keep the run open by holding its output', async (context) => {
  // setsid moves the sleep to a session of its own, out of the group's reach; it ignores SIGTERM
  // and keeps stdout open. The run ends once the group is gone (the pipes are cut), without waiting
  // for the SIGKILL the sleep gets after the grace period.
  const escape = `setsid sh -c 'trap "" TERM; echo $$ > escaped.pid; exec sleep 300' &`;
  const { result, out } = await runShell(context, escapeThen(escape, 'exit 0'), { killGraceMs: 3000 });
  const [escaped] = pidsPrinted(out);
  const runningWhenTheRunEnded = escaped !== undefined && isRunning(escaped);
  const itsOutput = runningWhenTheRunEnded ? readlinkSync(`/proc/${escaped}/fd/1`) : '';
  assert.is(result.exitCode, 0);
  assert.equal(out.at(-1), 'started');
  assert.ok(runningWhenTheRunEnded, 'the escaped sleep still ran when the run ended');
  assert.match(itsOutput, /^(pipe|socket):\[/, `and still held the output (node's pipes are socket pairs): ${itsOutput}`);
  await assertAllGone([escaped!], 8000);
});

// Escaped processes: a step's process that leaves the group (setsid, nohup after setsid, a double
// fork into a new session) still carries the step's marker in its environment, and is stopped too.

/** Ways to start `sleep 600` in a session of its own, as a step might; each writes its pid to `escaped.pid`. */
const escapeScripts: Record<string, string> = {
  'setsid … &': `setsid sh -c 'echo $$ > escaped.pid; exec sleep 600 >/dev/null 2>&1' &`,
  'setsid nohup … &': `setsid sh -c 'echo $$ > escaped.pid; exec nohup sleep 600 >/dev/null 2>&1' &`,
  'a double fork into a new session': `( setsid sh -c '(sleep 600 >/dev/null 2>&1 & echo $! > escaped.pid)' & )`,
  'setsid … & holding stdout': `setsid sh -c 'echo $$ > escaped.pid; exec sleep 600' &`,
};

/** A script that starts an escaped process, prints its pid once written, says `started`, then runs `then`. */
function escapeThen(escape: string, then: string): string {
  const waitForPid = 'tries=0; while [ ! -s escaped.pid ] && [ $tries -lt 250 ]; do sleep 0.02; tries=$((tries + 1)); done';
  return `${escape}\n${waitForPid}\necho "pid $(cat escaped.pid)"\necho started\n${then}`;
}

for (const [name, escape] of Object.entries(escapeScripts)) {
  processes(`a process that escaped the group (${name}) is stopped when the step ends`, async (context) => {
    const { result, out } = await runShell(context, escapeThen(escape, 'exit 0'), { killGraceMs: 300 });
    assert.is(result.exitCode, 0);
    const pids = pidsPrinted(out);
    assert.is(pids.length, 1, out.join('\n'));
    await assertAllGone(pids);
  });
}

processes('a process that escaped the group is stopped on cancel', async (context) => {
  const controller = new AbortController();
  const { result, out } = await runShell(context, escapeThen(escapeScripts['setsid … &'], 'sleep 300'), {
    signal: controller.signal,
    killGraceMs: 300,
    onLine: (line) => {
      if (line === 'started') controller.abort();
    },
  });
  assert.is(result.cancelled, true);
  const pids = pidsPrinted(out);
  assert.is(pids.length, 1);
  await assertAllGone(pids);
});

processes('a process that escaped the group is stopped on timeout', async (context) => {
  const { result, out } = await runShell(context, escapeThen(escapeScripts['setsid nohup … &'], 'sleep 300'), { timeoutMs: 600, killGraceMs: 300 });
  assert.is(result.timedOut, true);
  const pids = pidsPrinted(out);
  assert.is(pids.length, 1);
  await assertAllGone(pids);
});

processes('an escaped process that ignores SIGTERM is killed with SIGKILL after the grace period', async (context) => {
  const escape = `setsid sh -c 'trap "" TERM; echo $$ > escaped.pid; exec sleep 600 >/dev/null 2>&1' &`;
  const { result, out } = await runShell(context, escapeThen(escape, 'exit 0'), { killGraceMs: 300 });
  assert.is(result.exitCode, 0);
  const pids = pidsPrinted(out);
  assert.is(pids.length, 1);
  assert.ok(isRunning(pids[0]!), 'it survives SIGTERM');
  await assertAllGone(pids, 3000);
});

// Processes that leave the group and clear their environment, so the marker is gone too. They
// are stopped through the step's cgroup where Linux lets Factory make one (here: when
// `cgroupsHere` says so), and otherwise through the descendants followed in /proc, which
// `useCgroup: false` forces: both branches are tested wherever the first one is available.

/** A unique `sleep` argument per use, so a check of /proc never confuses another test's sleeps. */
let sleepSerial = 0;
function uniqueSleep(): string {
  sleepSerial += 1;
  return `300.${process.pid}${sleepSerial}`;
}

/** Ways a step starts `sleep <argument>` in a session of its own with no marker in its environment. */
const clearedEnvironmentForms: Record<string, (argument: string) => string> = {
  'setsid env -i': (argument) => `setsid env -i sleep ${argument} &`,
  'env -u <marker> setsid': (argument) => `env -u FACTORY_PROCESS_MARKER setsid sleep ${argument} &`,
  'a program that clears its environment and execs': (argument) => `setsid perl -e '%ENV = (); exec "sleep", "${argument}"' &`,
};

/** The pids of the processes whose command line is exactly `sleep <argument>`, from /proc. */
function sleepsWithArgument(argument: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1') === `sleep\0${argument}\0` && isRunning(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * A script that starts `form`, waits until the process runs `sleep <argument>` (its environment
 * cleared), prints its pid and `started`, then runs `then`.
 */
function clearedThen(form: string, argument: string, then: string): string {
  const waitForSleep = `tries=0; until [ "$(tr '\\0' ' ' < /proc/$!/cmdline 2>/dev/null)" = "sleep ${argument} " ] || [ $tries -ge 500 ]; do sleep 0.01; tries=$((tries + 1)); done`;
  return `${form}\n${waitForSleep}\necho "pid $!"\necho started\n${then}`;
}

/** What makes the case hard: whether the escaped sleep still carries a marker, and its process group. */
function describeEscape(pid: number): { marked: boolean; group: number; parent: number } {
  const environment = readFileSync(`/proc/${pid}/environ`, 'latin1');
  const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return { marked: environment.includes('FACTORY_PROCESS_MARKER='), group: Number(fields[2]), parent: Number(fields[1]) };
}

/** Whether this machine lets a process make a step cgroup (cgroup v2, a subtree it may write). */
async function cgroupsHere(): Promise<boolean> {
  const cgroup = await StepCgroup.create();
  if (!cgroup) return false;
  await cgroup.removeWhenEmpty(0);
  return true;
}

const containments = [
  { name: 'its cgroup', useCgroup: true },
  { name: 'the descendants followed in /proc', useCgroup: false },
];

for (const containment of containments) {
  for (const [formName, form] of Object.entries(clearedEnvironmentForms)) {
    processes(`cancel stops a process that cleared its environment (${formName}), by ${containment.name}`, async (context) => {
      const useCgroup = containment.useCgroup && (await cgroupsHere());
      const argument = uniqueSleep();
      const controller = new AbortController();
      let leader = 0;
      let escape: { marked: boolean; group: number; parent: number } | undefined;
      const { result } = await runShell(context, clearedThen(form(argument), argument, 'sleep 300'), {
        signal: controller.signal,
        killGraceMs: 300,
        useCgroup,
        onSpawn: (pid) => (leader = pid),
        onLine: (line) => {
          if (line !== 'started') return;
          const [pid] = sleepsWithArgument(argument);
          if (pid !== undefined) escape = describeEscape(pid);
          controller.abort();
        },
      });
      assert.is(result.cancelled, true);
      assert.is(escape?.marked, false, 'the sleep ran, without a marker');
      assert.ok(escape && escape.group !== leader, 'the sleep left the step’s process group');
      await waitFor(() => sleepsWithArgument(argument).length === 0, 3000, `sleep ${argument} to be gone`);
    });

    processes(`a timeout stops a process that cleared its environment (${formName}), by ${containment.name}`, async (context) => {
      const useCgroup = containment.useCgroup && (await cgroupsHere());
      const argument = uniqueSleep();
      let seen: number[] = [];
      const { result, out } = await runShell(context, clearedThen(form(argument), argument, 'sleep 300'), {
        timeoutMs: 1200,
        killGraceMs: 300,
        useCgroup,
        onLine: (line) => {
          if (line === 'started') seen = sleepsWithArgument(argument);
        },
      });
      assert.is(result.timedOut, true);
      assert.ok(out.includes('started'), `the escape finished before the timeout: ${out.join('\n')}`);
      assert.is(seen.length, 1, 'the escaped sleep ran');
      await waitFor(() => sleepsWithArgument(argument).length === 0, 3000, `sleep ${argument} to be gone`);
    });
  }
}

processes('each call runs in a cgroup of its own where Linux allows one, removed after it', async (context) => {
  const available = await cgroupsHere();
  const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((line) => line.startsWith('0::'));
  const { out } = await runShell(context, "grep '^0::' /proc/self/cgroup");
  if (!available) {
    // This machine gives no cgroup to make (cgroup v1, or one we may not write): the step stays in ours.
    assert.equal(out, own === undefined ? [] : [own]);
    return;
  }
  assert.match(out[0] ?? '', /^0::.*\/factory-step-[0-9a-f]{16}$/);
  assert.is(out[0]!.slice(0, out[0]!.lastIndexOf('/')).replace(/^0::$/, '0::/'), own, 'made under our own cgroup');
  const stepFolder = join((await findOwnCgroupFolder())!, out[0]!.split('/').at(-1)!);
  await waitFor(() => !existsSync(stepFolder), 3000, 'the step cgroup to be removed');
  assert.is(readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((line) => line.startsWith('0::')), own, 'we are back in our own');
});

processes('with a cgroup, a step that leaves a double-forked process without marker behind and exits stops it', async (context) => {
  // The subshell forks the escapee and exits at once, before any look at /proc could link the
  // escapee to the step; it has no marker and a session of its own: only the cgroup still holds it.
  if (!(await cgroupsHere())) return; // no cgroup here: the branch that applies is the descendants one, tested above
  const argument = uniqueSleep();
  const script = [
    `( setsid env -i sleep ${argument} & echo $! > escaped.pid )`,
    `tries=0; until [ -s escaped.pid ] && [ "$(tr '\\0' ' ' < /proc/$(cat escaped.pid)/cmdline 2>/dev/null)" = "sleep ${argument} " ] || [ $tries -ge 500 ]; do sleep 0.01; tries=$((tries + 1)); done`,
    'echo "pid $(cat escaped.pid)"',
  ].join('\n');
  let leader = 0;
  let escape: { marked: boolean; group: number; parent: number } | undefined;
  const { result } = await runShell(context, script, {
    killGraceMs: 300,
    onSpawn: (pid) => (leader = pid),
    onLine: (line) => {
      const [pid] = sleepsWithArgument(argument);
      if (line.startsWith('pid ') && pid !== undefined) escape = describeEscape(pid);
    },
  });
  assert.is(result.exitCode, 0);
  assert.ok(escape, 'the escaped sleep ran');
  assert.is(escape!.marked, false);
  assert.ok(escape!.group !== leader && escape!.parent !== leader, 'neither in the group nor a child of the step');
  await waitFor(() => sleepsWithArgument(argument).length === 0, 3000, `sleep ${argument} to be gone`);
});

processes('a process of the group gets one SIGTERM on cancel, not a second one from the marker', async (context) => {
  // Some programs take a second SIGTERM as "stop now, skip the cleanup".
  const controller = new AbortController();
  const script = "trap 'echo term' TERM; echo \"pid $$\"; echo started; while :; do sleep 0.05; done";
  const { result, out } = await runShell(context, script, {
    signal: controller.signal,
    killGraceMs: 600,
    onLine: (line) => {
      if (line === 'started') controller.abort();
    },
  });
  assert.is(result.signal, 'SIGKILL');
  assert.equal(out.filter((line) => line === 'term'), ['term']);
});

processes('processes without the step\'s marker are left alone: an unrelated one, and another step\'s', async (context) => {
  // Same user, no marker, in a session of its own: what a step's escaped process looks like, minus the marker.
  const unrelated = spawn('sleep', ['600'], { detached: true, stdio: 'ignore', env: { PATH } });
  context.pids.push(unrelated.pid!);
  unrelated.unref();
  // Another step, still running, whose own escaped process carries its own marker.
  const otherController = new AbortController();
  const otherFolder = join(context.dir, 'other');
  mkdirSync(otherFolder);
  let otherLeader = 0;
  let otherRun: Promise<Collected> | undefined;
  await new Promise<void>((resolve) => {
    otherRun = runShell(context, escapeThen(escapeScripts['setsid … &'], 'sleep 300'), {
      cwd: otherFolder,
      signal: otherController.signal,
      onSpawn: (pid) => (otherLeader = pid),
      onLine: (line) => {
        if (line === 'started') resolve();
      },
    });
  });
  const otherPid = context.pids.at(-1)!;
  try {
    // This step's escaped process ignores SIGTERM, so the cleanup ends with its SIGKILL pass, which
    // looks for the step's processes once more; every signal is seen by `kill` (the descendants
    // followed, not a cgroup, which is killed as a whole), so once that pass is seen, all is.
    const signals = recordingKill();
    const escape = `setsid sh -c 'trap "" TERM; echo $$ > escaped.pid; exec sleep 600 >/dev/null 2>&1' &`;
    const { out } = await runShell(context, escapeThen(escape, 'exit 0'), { killGraceMs: 300, useCgroup: false, kill: signals.kill });
    const [escaped] = pidsPrinted(out);
    await waitFor(() => signals.sent.some(({ pid, signal }) => pid === escaped && signal === 'SIGKILL'), 5000, 'the SIGKILL pass');
    const others = [unrelated.pid!, otherPid, otherLeader];
    assert.equal(signals.sent.filter(({ pid }) => others.includes(Math.abs(pid))), [], 'nothing was sent to the others');
    assert.ok(isRunning(unrelated.pid!), 'the unrelated process still runs');
    assert.ok(isRunning(otherPid), "the other step's escaped process still runs");
    await assertAllGone([escaped!]);
  } finally {
    otherController.abort();
    await otherRun;
  }
});

processes('binary output becomes valid text lines without control characters', async (context) => {
  const { result, out } = await runShell(context, 'head -c 200000 /dev/urandom');
  assert.is(result.exitCode, 0);
  assert.ok(out.length > 0);
  for (const line of out) {
    assert.not.match(line, /[\x00-\x08\x0a-\x1a\x1c-\x1f]/);
    assert.is(JSON.parse(JSON.stringify(line)), line);
    assert.ok(line.length <= 16_384);
  }
  assert.ok(result.output.length > 0);
});

processes('a 200 KB line arrives in pieces of at most maxLineLength that join back to the line', async (context) => {
  const { out } = await runShell(context, "head -c 200000 /dev/zero | tr '\\0' 'q'; echo; echo after", { maxLineLength: 16_384 });
  const pieces = out.slice(0, -1);
  assert.ok(pieces.length >= 13, `${pieces.length} pieces`);
  assert.ok(pieces.every((piece) => piece.length <= 16_384));
  assert.is(pieces.join(''), 'q'.repeat(200_000));
  assert.is(out.at(-1), 'after');
});

processes('keeps exactly the last MiB of a 3 MB output and says it was truncated', async (context) => {
  let lineCount = 0;
  const { result } = await runShell(context, 'seq 1 500000', { onLine: () => (lineCount += 1) });
  const whole = Array.from({ length: 500_000 }, (_, index) => `${index + 1}\n`).join('');
  assert.ok(whole.length > 3_000_000);
  assert.is(lineCount, 500_000, 'every line still reached onLine');
  assert.is(result.outputTruncated, true);
  assert.is(result.output.length, 1_048_576);
  assert.is(result.output, whole.slice(whole.length - 1_048_576));
});

processes('passes stdin to the child and closes it', async (context) => {
  const { result, out } = await runShell(context, 'cat', { stdin: 'first\nsecond é\n' });
  assert.is(result.exitCode, 0);
  assert.equal(out, ['first', 'second é']);
});

processes('a child that never reads a large stdin does not crash the caller', async (context) => {
  const stdin = 'x'.repeat(8 * 1024 * 1024);
  assert.is((await runShell(context, 'exit 0', { stdin })).result.exitCode, 0);
  assert.is((await runShell(context, 'sleep 0.2; exit 4', { stdin })).result.exitCode, 4);
});

processes('a missing command resolves with a spawn error that names it', async (context) => {
  const result = await runProcess({ command: 'factory-no-such-command', args: [], cwd: context.dir, env: { PATH } });
  assert.match(result.spawnError ?? '', /command not found: `factory-no-such-command`/);
  assert.is(result.exitCode, null);
  assert.is(result.output, '');
});

processes('a file that is not executable resolves with a permission error', async (context) => {
  const script = join(context.dir, 'script.sh');
  writeFileSync(script, '#!/bin/sh\necho hi\n');
  chmodSync(script, 0o644);
  const result = await runProcess({ command: script, args: [], cwd: context.dir, env: { PATH } });
  assert.match(result.spawnError ?? '', /permission denied: `.*script\.sh`/);
});

processes('a missing working folder resolves with an error that names the folder', async (context) => {
  const missing = join(context.dir, 'gone');
  const result = await runProcess({ command: '/bin/sh', args: ['-c', 'true'], cwd: missing, env: { PATH } });
  assert.match(result.spawnError ?? '', /working folder not found: `.*gone`/);
});

processes('the child sees exactly the environment it was given, plus a marker of its own', async (context) => {
  process.env.FACTORY_TEST_SECRET = 'must-not-leak';
  try {
    const lines: string[] = [];
    const env = { PATH, FACTORY_ONLY: 'yes', WITH_SPACE: 'a b' };
    await runProcess({ command: '/usr/bin/env', args: [], cwd: context.dir, env, onLine: (line) => lines.push(line) });
    const markers = lines.filter((line) => line.startsWith('FACTORY_PROCESS_MARKER='));
    assert.equal(lines.filter((line) => !markers.includes(line)).sort(), ['FACTORY_ONLY=yes', `PATH=${PATH}`, 'WITH_SPACE=a b']);
    assert.is(markers.length, 1);
    assert.match(markers[0]!, /^FACTORY_PROCESS_MARKER=[0-9a-f]{32}$/);
  } finally {
    delete process.env.FACTORY_TEST_SECRET;
  }
});

processes('each call gets a new marker, which the caller cannot set', async (context) => {
  const env = { PATH, FACTORY_PROCESS_MARKER: 'chosen-by-the-caller' };
  const markers = new Set<string>();
  for (let call = 0; call < 3; call++) {
    const { out } = await runShell(context, 'echo "$FACTORY_PROCESS_MARKER"', { env });
    markers.add(out.join());
  }
  assert.is(markers.size, 3);
  assert.not.ok(markers.has('chosen-by-the-caller'));
});

processes('runs in the given working folder', async (context) => {
  const { out } = await runShell(context, 'pwd -P');
  assert.equal(out, [realpathSync(context.dir)]);
});

processes('a signal aborted before the start starts nothing', async (context) => {
  let spawnCalls = 0;
  let spawnedPid: number | undefined;
  const signals = recordingKill();
  const { result, out } = await runShell(context, 'echo started', {
    signal: AbortSignal.abort(),
    spawn: (command, args, options) => {
      spawnCalls += 1;
      return spawn(command, args, options);
    },
    onSpawn: (pid) => (spawnedPid = pid),
    kill: signals.kill,
  });
  assert.is(result.cancelled, true);
  assert.is(result.exitCode, null);
  assert.is(spawnCalls, 0, 'no process was started');
  assert.is(spawnedPid, undefined);
  assert.equal(signals.sent, [], 'nor signalled');
  assert.equal(out, []);
});

processes('a throwing onLine listener does not stop the lines or the run', async (context) => {
  const seen: string[] = [];
  const originalError = console.error;
  console.error = () => {};
  try {
    const result = await runProcess({
      command: '/bin/sh', args: ['-c', 'echo a; echo b; exit 2'], cwd: context.dir, env: { PATH },
      onLine: (line) => {
        seen.push(line);
        throw new Error('listener bug');
      },
    });
    assert.is(result.exitCode, 2);
    assert.equal(seen, ['a', 'b']);
  } finally {
    console.error = originalError;
  }
});

processes('refuses out-of-range options and group ids that would signal other processes', async (context) => {
  const base = { command: '/bin/sh', args: ['-c', 'true'], cwd: context.dir, env: { PATH } };
  await rejects(runProcess({ ...base, timeoutMs: -1 }), /timeoutMs must be 0 or more, got -1/);
  await rejects(runProcess({ ...base, killGraceMs: Number.NaN }), /killGraceMs .* got NaN/);
  await rejects(runProcess({ ...base, outputLimit: 1.5 }), /outputLimit .* got 1\.5/);
  await rejects(runProcess({ ...base, command: '' }), /command must be a non-empty string/);
  for (const pid of [0, 1, -3, 2.5]) assert.throws(() => killProcessGroup(pid, 'SIGTERM'), /Not a process group id/);
  assert.is(killProcessGroup(2 ** 22 + 12_345, 'SIGTERM'), false, 'a group that does not exist');
});

processes.run();
