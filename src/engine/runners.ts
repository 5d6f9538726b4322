// testRunner (issue 25): whether a runner can run steps, and what it finds there: git's version and
// each enabled harness's version (or why it cannot run there, with how to install it there).
// `local` runs the commands here; `sandbox` runs them inside the sandbox (so bwrap is proven to
// work); `ssh` runs them on the host through the system ssh client (engine/ssh.ts).

import type { HarnessDefinition, Runner, RunnerTest } from '../core/api';
import { errorMessage, testFailure } from '../core/errors';
import { localRunner, validateRunner, type RunnerContext } from '../core/runners';
import { runProcess } from './process';
import { sandboxCommand } from './sandbox';
import { definedEntries, shellWord, sshVersions, type SshSetup } from './ssh';

interface RunnerTestOptions extends Partial<RunnerContext> {
  /** The harnesses whose CLIs are looked for (the enabled ones). */
  harnesses: readonly HarnessDefinition[];
  /** The environment the commands run with; default process.env. */
  env?: Record<string, string>;
  /** How long each command may take; default 15 s. */
  timeoutMs?: number;
  /** How ssh runners are reached (default: a private socket folder, the user's known hosts). */
  ssh?: SshSetup;
}

/** A shell script that prints one line per command: `<label>\t<version or what failed>`. */
export function versionScript(harnesses: readonly Pick<HarnessDefinition, 'id' | 'command' | 'versionArgs'>[]): string {
  const lines = ['probe() { label=$1; shift; if command -v "$1" >/dev/null 2>&1; then out=$("$@" 2>&1 | head -n 1); printf "%s\\t%s\\n" "$label" "$out"; else printf "%s\\t\\n" "$label"; fi; }', 'probe git git --version'];
  for (const harness of harnesses) lines.push(['probe', shellWord(harness.id), shellWord(harness.command), ...harness.versionArgs.map(shellWord)].join(' '));
  return lines.join('\n');
}

/** Reads versionScript's output into the test's details: a missing CLI says how to install it there. */
export function readVersions(output: string, harnesses: readonly Pick<HarnessDefinition, 'id' | 'name' | 'command' | 'install'>[], where: string): NonNullable<RunnerTest['details']> & { gitMissing: boolean } {
  const found = new Map<string, string>();
  for (const line of output.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) found.set(line.slice(0, tab), line.slice(tab + 1).trim());
  }
  const versions: Record<string, string> = {};
  for (const harness of harnesses) {
    const version = found.get(harness.id);
    versions[harness.id] = version
      ? version
      : `${harness.name} is not installed ${where}: \`${harness.command}\` was not found${harness.install ? `; install it there with \`${harness.install}\`` : ''}`;
  }
  const git = found.get('git');
  return { ...(git ? { git } : {}), harnesses: versions, gitMissing: !git };
}

/**
 * Tests a runner without saving it: checks it as saveRunner would (except the built-in `local`),
 * then runs git's and the harnesses' version commands where its steps would run. `ok` is false with
 * the problem in words when the runner cannot be reached or lacks git; a missing agent CLI is listed
 * in `details.harnesses` (the step that needs it fails), not a failure of the runner.
 */
export async function testRunner(input: unknown, options: RunnerTestOptions): Promise<RunnerTest> {
  let runner: Runner;
  try {
    runner = (input as Runner | null)?.id === localRunner.id ? { ...localRunner } : { id: 'rnr_test', ...validateRunner(input, { otherNames: options.otherNames ?? [] }) } as Runner;
  } catch (error) {
    return testFailure(error);
  }
  const env = options.env ?? definedEntries(process.env);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const script = versionScript(options.harnesses);
  try {
    let output: string;
    let where: string;
    if (runner.kind === 'ssh') {
      output = await sshVersions(runner, script, { env, timeoutMs, setup: options.ssh });
      where = `on ${runner.host}`;
    } else {
      const workspace = env.HOME ?? '/';
      let command = { command: '/bin/sh', args: ['-c', script], env };
      if (runner.kind === 'sandbox') {
        command = await sandboxCommand(runner, { workspace: '/tmp', env, command: '/bin/sh', args: ['-c', script], harnessPaths: options.harnesses.flatMap((harness) => harness.sandboxPaths ?? []) });
      }
      const result = await runProcess({ ...command, cwd: runner.kind === 'sandbox' ? '/tmp' : workspace, timeoutMs, killGraceMs: 1000, useCgroup: false });
      if (result.spawnError) return { ok: false, error: result.spawnError };
      if (result.timedOut) return { ok: false, error: `The version commands took longer than ${timeoutMs / 1000} s` };
      output = result.output;
      where = runner.kind === 'sandbox' ? 'in the sandbox' : 'on this computer';
    }
    const { gitMissing, ...details } = readVersions(output, options.harnesses, where);
    if (gitMissing) return { ok: false, error: `git was not found ${where}: install it there (apt-get install git)`, details };
    return { ok: true, details };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}
