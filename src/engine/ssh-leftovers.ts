// What a killed Factory left running on an ssh runner's host (issue 25): after a restart, the
// processes whose pid files (written by ssh-run.ts's bootstrap) no live run owns are stopped, and
// their pid files and stop marks removed.

import { runProcess } from './process';
import {
  definedEntries, ensureMaster, remoteWorkDir, shellWord, sshArguments, sshClientEnvironment, SshError, type SshRunner, type SshSetup,
} from './ssh';

/**
 * Stops what runs on the host from pid files whose run is not in `liveRunIds` (processes a run left
 * when Factory was killed), and removes those pid files. A group is signalled only while its
 * leader still has the run's FACTORY_REMOTE_KEY in its environment: a reused pid is left alone.
 * Resolves with the keys of the groups stopped.
 */
export async function stopLeftoverProcesses(runner: SshRunner, setup: SshSetup, liveRunIds: readonly string[], options: { localEnv?: Record<string, string>; graceMs?: number } = {}): Promise<string[]> {
  const live = liveRunIds.filter((id) => /^run_[0-9a-z]+$/.test(id)).join(' ');
  const graceSec = Math.max(1, Math.ceil((options.graceMs ?? 5000) / 1000));
  const script = [
    `cd ${shellWord(remoteWorkDir(runner))}/.factory-pids 2>/dev/null || exit 0`,
    `live=${shellWord(live)}`,
    'for f in *.pgid; do',
    '  [ -f "$f" ] || continue',
    '  run=${f%%.*}; run=${run%%-*}',
    '  case " $live " in *" $run "*) continue;; esac',
    '  pg=$(cat "$f"); case $pg in ""|*[!0-9]*) rm -f "$f"; continue;; esac',
    // A leader still there must carry this key (its pid may have been reused); without one, the group's pgid cannot have been.
    '  if [ -r "/proc/$pg/environ" ] && ! tr "\\0" "\\n" < "/proc/$pg/environ" | grep -qx "FACTORY_REMOTE_KEY=${f%.pgid}"; then rm -f "$f"; continue; fi',
    '  if kill -0 "-$pg" 2>/dev/null; then',
    '    kill -TERM "-$pg" 2>/dev/null; echo "${f%.pgid}"',
    `    i=0; while kill -0 "-$pg" 2>/dev/null && [ $i -lt ${graceSec * 10} ]; do sleep 0.1; i=$((i+1)); done`,
    '    kill -KILL "-$pg" 2>/dev/null',
    '  fi',
    '  rm -f "$f"',
    'done',
    // Stop marks no bootstrap came to read (its ssh never reached the host) go with their run.
    'for s in *.stop; do',
    '  [ -f "$s" ] || continue',
    '  run=${s%%.*}; run=${run%%-*}',
    '  case " $live " in *" $run "*) continue;; esac',
    '  rm -f "$s"',
    'done',
  ].join('\n');
  await ensureMaster(runner, setup, options.localEnv);
  const result = await runProcess({
    command: setup.sshCommand ?? 'ssh', args: sshArguments(runner, setup, `sh -c ${shellWord(script)}`), cwd: '/',
    env: sshClientEnvironment(options.localEnv ?? definedEntries(process.env)), timeoutMs: 60_000, killGraceMs: 1000,
  });
  if (result.exitCode !== 0) throw new SshError(`Could not look for leftover processes on ${runner.host}: ssh ended with exit code ${result.exitCode ?? result.signal}`);
  return result.output.split('\n').filter(Boolean);
}
