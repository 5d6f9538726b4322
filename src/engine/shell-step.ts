// Shell steps: `/bin/sh -c <command>` in the workspace, in a process group of its own.
// Text from issues, webhooks and agents never enters the command: placeholders become
// environment-variable references (core/template.ts), and the values travel beside it.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShellStep } from '../core/api';
import { renderShellCommand } from '../core/shell-quoting';
import { renderTemplate } from '../core/template';
import { buildStepEnvironment } from './environment';
import { runProcess, type ProcessResult, type RunProcessOptions } from './process';
import { formatDuration } from '../core/runs';
import type { StepOutcome, StepRunner } from './steps';

/**
 * The largest value passed in the environment. Linux refuses a single environment string over
 * 128 KiB (E2BIG); larger values go through a file that the command reads into a shell variable.
 */
const maxEnvironmentValue = 100_000;

/** The outcome of a finished process, as a step sees it. */
function processOutcome(result: ProcessResult, timeoutMs: number, lastErrorLine: string | undefined): StepOutcome {
  const base = { output: result.output, ...(result.exitCode === null ? {} : { exitCode: result.exitCode }) };
  const detail = lastErrorLine ? `: ${lastErrorLine}` : '';
  if (result.spawnError) return { status: 'failed', error: result.spawnError };
  if (result.cancelled) return { status: 'cancelled' };
  if (result.timedOut) return { ...base, status: 'failed', error: `Timed out after ${formatDuration(timeoutMs)}` };
  if (result.exitCode === 0) return { ...base, status: 'succeeded' };
  if (result.exitCode === null) return { ...base, status: 'failed', error: `Killed by ${result.signal ?? 'a signal'}${detail}` };
  return { ...base, status: 'failed', error: `Exited with code ${result.exitCode}${detail}` };
}

/** The longest value the echoed command shows; longer ones are cut, with `…`. */
const shownValueLength = 200;

/**
 * The command as it runs, for the log: each `${FACTORY_T…}` reference of a rendered command shows
 * its value (`values`, renderShellCommand's env), a value that is or holds one of `secrets` as
 * `***`, a value over 200 characters cut with `…`. For reading only: the shell never sees it.
 */
export function commandAsRun(command: string, values: Record<string, string>, secrets: readonly string[]): string {
  return command.replace(/\$\{(FACTORY_T\d+)\}/g, (reference, name: string) => {
    const value = values[name];
    if (value === undefined) return reference;
    if (secrets.some((secret) => secret !== '' && (value === secret || (secret.length >= 8 && value.includes(secret))))) return '***';
    return value.length > shownValueLength ? `${value.slice(0, shownValueLength)}…` : value;
  });
}

/**
 * The log lines a command is echoed as, read like a CI run page: `$ ` before its first line and two
 * spaces before each next one, so a script shows line by line as it was written. Blank lines
 * before and after it are left out.
 */
export function echoLines(command: string): string[] {
  const lines = command.split(/\r?\n/);
  while (lines.length > 1 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 1 && lines.at(-1)!.trim() === '') lines.pop();
  return lines.map((line, index) => (index === 0 ? `$ ${line}` : line.trim() === '' ? '' : `  ${line}`));
}

export function createShellRunner(run: (options: RunProcessOptions) => Promise<ProcessResult> = runProcess): StepRunner {
  return async (attempt) => {
    const step = attempt.step as ShellStep;
    const rendered = renderShellCommand(step.command, attempt.template, step.env);
    const stepEnvironment: Record<string, string> = {};
    for (const [name, value] of Object.entries(step.env ?? {})) stepEnvironment[name] = renderTemplate(value, attempt.template);
    const environment = buildStepEnvironment({}, attempt.secrets, attempt.environment, rendered.env, stepEnvironment);

    // Values too large for the environment: a file each, read into a shell variable.
    let command = rendered.command;
    let folder: string | undefined;
    const prefix: string[] = [];
    for (const [name, value] of Object.entries(environment)) {
      if (value.length <= maxEnvironmentValue / 4 || Buffer.byteLength(value) <= maxEnvironmentValue) continue;
      delete environment[name];
      if (!/^FACTORY_T\d+$/.test(name)) {
        attempt.log(`${name} is ${Buffer.byteLength(value)} bytes, too large for the environment; use its placeholder in the command instead`, 'info');
        continue;
      }
      folder ??= await mkdtemp(join(tmpdir(), 'factory-values-'));
      const file = join(folder, name);
      await writeFile(file, value, { mode: 0o600 });
      environment[`${name}_FILE`] = file;
      // `printf x` keeps trailing newlines, which $(…) would strip; the text is never parsed as code.
      prefix.push(`${name}=$(cat "$${name}_FILE"; printf x); ${name}=\${${name}%x}`);
    }
    if (prefix.length > 0) command = `${prefix.join('\n')}\n${command}`;

    for (const line of echoLines(commandAsRun(rendered.command, rendered.env, attempt.secrets))) attempt.log(line, 'info');
    let errorTail = Buffer.alloc(0);
    try {
      const result = await (attempt.exec ?? run)({
        command: '/bin/sh',
        args: ['-c', command],
        cwd: attempt.workspace,
        env: environment,
        timeoutMs: attempt.timeoutMs,
        signal: attempt.signal,
        onSpawn: (pid) => attempt.started(pid),
        // The bytes go to the log as they are; only the end of stderr is kept, for the error.
        onChunk: (chunk, stream) => {
          if (stream === 'err') errorTail = Buffer.concat([errorTail, chunk]).subarray(-4096);
          return attempt.output(chunk, stream);
        },
      });
      const lastErrorLine = errorTail.toString('utf8').split('\n').map((line) => line.replace(/[\x00-\x1F]/g, '').trim()).filter(Boolean).at(-1)?.slice(0, 300);
      const outcome = processOutcome(result, attempt.timeoutMs, lastErrorLine);
      const summary = outcome.status === 'succeeded' ? 'Succeeded' : outcome.status === 'cancelled' ? 'Cancelled' : 'error' in outcome ? outcome.error : outcome.status;
      attempt.log(`${summary} in ${formatDuration(result.durationMs)}`, 'info');
      return outcome;
    } finally {
      if (folder) await rm(folder, { recursive: true, force: true });
    }
  };
}
