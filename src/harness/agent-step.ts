// Agent steps: a coding-agent CLI run in the workspace, in a process group of its own. The prompt
// is a rendered template that reaches the CLI on stdin or as one argv element (never a shell);
// the CLI's structured output becomes readable log lines, the final answer and the usage.

import type { AgentStep, HarnessDefinition } from '../core/api';
import { renderTemplate, stepEnvironment } from '../core/template';
import { buildStepEnvironment } from '../engine/environment';
import { runProcess, type ProcessResult, type RunProcessOptions } from '../engine/process';
import { formatDuration } from '../core/runs';
import type { StepOutcome, StepRunner } from '../engine/steps';
import { notInstalledMessage } from './builtins';
import { buildInvocation } from './invocation';
import { createParser } from './parsers';
import { planResume, promptWithSummary, sessionNotFoundPattern } from './resume';
import { budgetContinuationPrompt } from '../core/budget';
import { AgentBudget } from './agent-budget';
import { AgentWatch, continuationPrompt } from './agent-watch';

const defaultStallSec = 600;
/** The final answer kept as the step's output, like a shell step's stdout (the tail). */
const maxOutputLength = 1024 * 1024;
/** The longest error message a step's error quotes from the CLI, in characters. */
const maxQuotedError = 300;

/** A stderr line that reads like an error: logging levels and words such as "failed" or "denied". */
const errorWords = /\b(error|errors|fatal|panic|exception|fail|failed|failure|denied|refused|unauthori[sz]ed|forbidden|invalid|unreachable|timed out|timeout|cannot|could not|unable)\b/i;
const notAnError = /^\s*(warn|warning|info|debug|trace|note|hint)\b/i;

/**
 * A stderr line as a step's error quotes it: colour codes, a leading ISO time and a leading
 * `ERROR:` tag removed, cut to `maxQuotedError`; undefined when the line does not read like an
 * error (progress, notes, warnings).
 */
export function errorFromStderr(line: string): string | undefined {
  let text = line.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').trim();
  if (!errorWords.test(text) || notAnError.test(text)) return undefined;
  text = text.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z?\s+/, '').replace(/^\[?(error|fatal)\]?:?\s+/i, '');
  return text.length > maxQuotedError ? `${text.slice(0, maxQuotedError - 1)}…` : text;
}

/**
 * The last error a CLI reported, for a timeout or stall to name: an error event its parser saw
 * is preferred to a stderr line (CLIs log retries to stderr beside the event that says why).
 */
class LastError {
  private reported: string | undefined;
  private stderr: string | undefined;

  event(message: string): void {
    this.reported = message.length > maxQuotedError ? `${message.slice(0, maxQuotedError - 1)}…` : message;
  }

  stderrLine(line: string): void {
    this.stderr = errorFromStderr(line) ?? this.stderr;
  }

  /** `; the last error Codex reported: …`, or '' when it reported none. */
  suffix(harnessName: string): string {
    const message = this.reported ?? this.stderr;
    return message === undefined ? '' : `; the last error ${harnessName} reported: ${message}`;
  }
}

interface AgentRunnerOptions {
  /** The harness definition for an id (built-ins merged with the user's changes), or undefined. */
  harness(id: string): HarnessDefinition | undefined;
  /** The absolute path of the harness's command (PATH and the usual install folders), or undefined. */
  resolveCommand(definition: HarnessDefinition): Promise<string | undefined>;
  /** The harness used when neither the step nor its pipeline names one. */
  defaultHarnessId(): string | undefined;
  /** Called once when a step has printed nothing for its stall time (an inbox item). */
  stalled(runId: string, stepId: string, message: string): void;
  run?: (options: RunProcessOptions) => Promise<ProcessResult>;
  now?: () => number;
}

export function createAgentRunner(options: AgentRunnerOptions): StepRunner {
  const run = options.run ?? runProcess;
  const now = options.now ?? Date.now;
  return async (attempt) => {
    const step = attempt.step as AgentStep;
    const harnessId = step.harnessId ?? attempt.defaults?.harnessId ?? options.defaultHarnessId() ?? 'claude';
    const definition = options.harness(harnessId);
    if (!definition) return { status: 'failed', error: `No harness \`${harnessId}\`: choose one in the step or the pipeline` };
    if (!definition.enabled) return { status: 'failed', error: `The harness ${definition.name} is switched off in Harnesses` };
    // Guidance is appended after rendering: its text is never read for placeholders.
    const prompt = renderTemplate(step.prompt, attempt.template) + (attempt.guidance ? `\n\n${attempt.guidance}` : '');
    const systemPrompt = step.systemPrompt ? renderTemplate(step.systemPrompt, attempt.template) : undefined;
    attempt.record({ prompt, ...(systemPrompt ? { systemPrompt } : {}) });
    const model = step.model ?? attempt.defaults?.model ?? '';
    buildInvocation(definition, { prompt, systemPrompt, model }); // refuses a bad value before anything runs
    const environment = buildStepEnvironment({}, attempt.secrets, attempt.environment, stepEnvironment(attempt.template), definition.env);
    // On another machine the CLI is found there by its name; a missing one fails with how to install it there.
    const commandPath = attempt.remote ? definition.command : await options.resolveCommand(definition);
    if (!commandPath) return { status: 'failed', error: notInstalledMessage(definition) };
    const exec = attempt.exec ? (processOptions: RunProcessOptions) => attempt.exec!(processOptions, { harnessPaths: definition.sandboxPaths ?? [] }) : run;

    /** One run of the CLI; `sessionNotFound` when it was asked to resume and said it has no such session. */
    const runAgent = async (promptText: string, resumeSessionId?: string): Promise<{ outcome: StepOutcome; sessionNotFound: boolean }> => {
      if (promptText !== prompt) attempt.record({ prompt: promptText });
      const invocation = buildInvocation(definition, { prompt: promptText, systemPrompt, model, ...(resumeSessionId ? { resumeSessionId } : {}) });
      const parser = createParser(definition.output);
      attempt.log(`$ ${[invocation.command, ...invocation.args.map((arg) => (arg === promptText ? '<prompt>' : arg))].join(' ')}`, 'info');
      const lastError = new LastError();
      const budget = new AgentBudget(attempt.budget, definition, model);
      // Liveness, onStall and the model's usage limit (agent-watch.ts).
      const watch = new AgentWatch({
        step, cancelled: attempt.signal, stallMs: (step.stallSec ?? defaultStallSec) * 1000, timeoutMs: attempt.timeoutMs, harnessName: definition.name, now,
        record: (details) => attempt.record(details), log: (line) => attempt.log(line, 'info'),
        stalled: (message) => options.stalled(attempt.runId, step.id, message), lastErrorSuffix: () => lastError.suffix(definition.name),
      });

      let lastErrorLine: string | undefined;
      let recordedSession: string | undefined;
      let sessionMissing = false;
      let result: ProcessResult;
      try {
        result = await exec({
          command: commandPath,
          args: invocation.args,
          ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
          cwd: attempt.workspace,
          env: environment,
          timeoutMs: attempt.timeoutMs,
          signal: watch.signal,
          interrupt: budget.interrupt,
          onSpawn: (pid) => attempt.started(pid),
          outputLimit: 1,
          onLine: (line, stream) => {
            watch.line(line);
            if (resumeSessionId && sessionNotFoundPattern.test(line)) sessionMissing = true;
            if (stream === 'err') {
              if (line.trim()) lastErrorLine = line.trim().slice(0, maxQuotedError);
              lastError.stderrLine(line);
              attempt.log(line, 'err');
              return;
            }
            const lines = parser.push(line);
            for (const parsed of lines) {
              if (parsed.error !== undefined) lastError.event(parsed.error);
              attempt.log(parsed.text, parsed.stream);
            }
            budget.see(parser, lines);
            // The session as soon as the CLI names it: a crash later still leaves it to resume.
            const sessionId = parser.sessionId();
            if (sessionId !== undefined && sessionId !== recordedSession) {
              recordedSession = sessionId;
              attempt.record({ sessionId });
            }
          },
        });
      } finally {
        watch.stop();
      }
      const parsed = parser.finish();
      const usage = parsed.usage && Object.keys(parsed.usage).length > 0 ? { usage: parsed.usage } : {};
      const output = parsed.output.length > maxOutputLength ? parsed.output.slice(-maxOutputLength) : parsed.output;
      let outcome: StepOutcome;
      if (result.spawnError) outcome = { status: 'failed', error: `${definition.name}: ${result.spawnError}${attempt.remote && definition.install ? ` (\`${definition.install}\`)` : ''}` };
      else if (result.cancelled && attempt.signal.aborted) outcome = { status: 'cancelled' };
      else if (result.timedOut) outcome = { status: 'failed', output, ...usage, error: `Timed out after ${formatDuration(attempt.timeoutMs)}${lastError.suffix(definition.name)}` };
      else if (result.exitCode !== 0) {
        const reason = parsed.error ?? lastErrorLine ?? (result.exitCode === null ? `killed by ${result.signal}` : `exited with code ${result.exitCode}`);
        outcome = { status: 'failed', output, ...usage, ...(result.exitCode !== null ? { exitCode: result.exitCode } : {}), error: `${definition.name} failed: ${reason}` };
      } else if (parsed.error) outcome = { status: 'failed', output, ...usage, exitCode: 0, error: `${definition.name} reported an error: ${parsed.error}` };
      else outcome = { status: 'succeeded', output, ...usage, exitCode: 0 };
      outcome = watch.settle(outcome, attempt.signal.aborted, result.timedOut);
      outcome = budget.settle(outcome, parsed.usage, attempt.signal.aborted);
      attempt.log(`${outcome.status === 'succeeded' ? 'Succeeded' : outcome.status === 'cancelled' ? 'Cancelled' : outcome.status === 'rateLimited' ? 'Stopped by the model\'s usage limit' : 'error' in outcome ? outcome.error : 'Failed'} in ${formatDuration(result.durationMs)}`, 'info');
      return { outcome, sessionNotFound: sessionMissing && outcome.status === 'failed' && result.exitCode !== null && !result.timedOut };
    };

    // A cap reached before anything starts (the daily limit, the run's cap): the step waits for a decision.
    const pausedBefore = attempt.budget?.check();
    if (pausedBefore) return { status: 'waiting', ...pausedBefore };
    // After a pause at a budget cap: resume the session where the harness can, else afresh with the last output (engine/budget.ts).
    const afterBudget = attempt.budget?.continuation;
    if (afterBudget) {
      const resumable = afterBudget.sessionId && definition.resume?.length ? afterBudget.sessionId : undefined;
      attempt.log(resumable ? `Resuming ${definition.name} session ${resumable} after the budget pause` : `Starting the step afresh with its last output after the budget pause`, 'info');
      const continued = resumable ? await runAgent(budgetContinuationPrompt(prompt, true), resumable) : undefined;
      if (continued && !continued.sessionNotFound) return continued.outcome;
      return (await runAgent(budgetContinuationPrompt(prompt, false, afterBudget.output))).outcome;
    }
    // After the model's usage limit: the same attempt goes on in its session, else afresh (rate-limit-waits.ts).
    if (attempt.continueSession) {
      const { sessionId } = attempt.continueSession;
      if (!sessionId || !definition.resume?.length) {
        attempt.log(`${definition.name} ${sessionId ? 'cannot resume a session' : 'reported no session'}: starting the step's prompt afresh in the same workspace`, 'info');
        return (await runAgent(prompt)).outcome;
      }
      attempt.log(`Resuming ${definition.name} session ${sessionId} after the usage limit`, 'info');
      const continued = await runAgent(continuationPrompt(prompt), sessionId);
      if (!continued.sessionNotFound) return continued.outcome;
      attempt.log(`${definition.name} has no session ${sessionId}: starting the step's prompt afresh`, 'info');
      return (await runAgent(prompt)).outcome;
    }
    // A follow-up: resume the earlier run's session, or start fresh with its summary (resume.ts).
    const plan = attempt.earlier
      ? await planResume(attempt.earlier, definition, { defaultHarnessId: options.defaultHarnessId() ?? 'claude', workspace: attempt.workspace, environment })
      : undefined;
    if (plan) attempt.log(plan.note, 'info');
    const freshPrompt = plan ? promptWithSummary(prompt, plan) : prompt;
    if (!plan?.sessionId) return (await runAgent(freshPrompt)).outcome;
    const resumed = await runAgent(prompt, plan.sessionId);
    if (!resumed.sessionNotFound) return resumed.outcome;
    // The CLI lost the session (another machine, a cleaned folder): once more, fresh, in the same attempt.
    attempt.log(`${definition.name} has no session ${plan.sessionId}: starting fresh${plan.summary ? ` with the summary of run ${plan.runId}` : ''} (not counted as a failed attempt)`, 'info');
    return (await runAgent(freshPrompt)).outcome;
  };
}
