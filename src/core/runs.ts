// Pure rules about runs: checking what callers send, the shapes the API returns, and the
// decisions of approval steps.

import type { ApprovalStep, Issue, Run, RunFilter, RunStatus, StartRunRequest, StepRun } from './api';
import { finishedRunStatuses } from './api';
import type { BudgetLedger } from './budget';
import { ValidationError, quote, type ValidationIssue } from './errors';
import { isRecord, nulCharacterMessage, shown } from './validate';

export const runStatuses: readonly RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'rejected'];
const defaultListLimit = 500;
const maxListLimit = 10_000;

/** A readable duration: "850 ms", "4.2 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export function isFinished(status: RunStatus): boolean {
  return finishedRunStatuses.includes(status);
}

const issueTextFields = ['key', 'description', 'url', 'priority', 'source'] as const;
const maxTitleLength = 1000;
const maxTextLength = 1_000_000;

/**
 * How deep `issue.raw` may nest, the top object being level 1: what a generic webhook body may be
 * (src/triggers/providers/generic.ts), since deeper objects overflow the stack of JSON.stringify
 * and structuredClone when the run is stored.
 */
const maxRawDepth = 100;

/**
 * Checks `issue.raw` without recursion: nesting deeper than `maxRawDepth`, and NUL in its texts
 * and keys (reported once, at the path of the first one found). Each object is visited once.
 */
function checkRaw(raw: Record<string, unknown>, field: string, issues: ValidationIssue[]): void {
  const pending: { value: object; depth: number; path: string }[] = [{ value: raw, depth: 1, path: field }];
  const visited = new Set<object>();
  let nulAt: string | undefined;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > maxRawDepth) {
      issues.push({ field, message: `The webhook body is nested deeper than ${maxRawDepth} levels of objects and lists; a webhook body may nest at most ${maxRawDepth}` });
      return;
    }
    if (visited.has(next.value)) continue;
    visited.add(next.value);
    for (const [key, child] of Object.entries(next.value)) {
      if (nulAt === undefined && key.includes('\0')) nulAt = next.path;
      if (typeof child === 'string' && nulAt === undefined && child.includes('\0')) nulAt = `${next.path}.${key}`;
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: next.depth + 1, path: `${next.path}.${key}` });
    }
  }
  if (nulAt !== undefined) issues.push({ field: nulAt.length > 200 ? `${nulAt.slice(0, 197)}...` : nulAt, message: `The webhook body ${nulCharacterMessage}` });
}

/**
 * Checks an issue from any door; returns a clean copy (unknown fields dropped, `raw` kept). Refuses
 * text holding NUL (in `raw` too) and a `raw` nested deeper than `maxRawDepth`.
 */
function validateIssue(input: unknown, issues: ValidationIssue[], field = 'issue'): Issue | undefined {
  if (!isRecord(input)) {
    issues.push({ field, message: `The issue must be an object with at least a title, not ${shown(input)}` });
    return undefined;
  }
  const title = typeof input.title === 'string' ? input.title.trim() : '';
  if (!title) issues.push({ field: `${field}.title`, message: 'The issue title is empty: an issue needs a title' });
  else if (title.length > maxTitleLength) issues.push({ field: `${field}.title`, message: `The issue title is ${title.length} characters long; the most is ${maxTitleLength}` });
  else if (title.includes('\0')) issues.push({ field: `${field}.title`, message: `The issue title ${nulCharacterMessage}` });
  const issue: Issue = { title };
  for (const name of issueTextFields) {
    const value = input[name];
    if (value === undefined || value === null) continue;
    const subject = `The issue ${name === 'url' ? 'URL' : name}`;
    if (typeof value !== 'string') issues.push({ field: `${field}.${name}`, message: `${subject} must be text, not ${shown(value)}` });
    else if (value.length > maxTextLength) issues.push({ field: `${field}.${name}`, message: `${subject} is ${value.length} characters long; the most is ${maxTextLength}` });
    else if (value.includes('\0')) issues.push({ field: `${field}.${name}`, message: `${subject} ${nulCharacterMessage}` });
    else issue[name] = value;
  }
  if (input.labels !== undefined && input.labels !== null) {
    if (!Array.isArray(input.labels)) issues.push({ field: `${field}.labels`, message: `The issue labels must be a list of up to 100 texts, not ${shown(input.labels)}` });
    else if (input.labels.length > 100) issues.push({ field: `${field}.labels`, message: `The issue has ${input.labels.length} labels; the most is 100` });
    else if (!input.labels.every((label) => typeof label === 'string')) {
      issues.push({ field: `${field}.labels`, message: `The issue labels must all be texts, not ${shown(input.labels.find((label) => typeof label !== 'string'))}` });
    } else if (input.labels.some((label) => label.includes('\0'))) {
      issues.push({ field: `${field}.labels`, message: `An issue label ${nulCharacterMessage}` });
    } else issue.labels = [...input.labels];
  }
  if (input.raw !== undefined && input.raw !== null) {
    if (!isRecord(input.raw)) issues.push({ field: `${field}.raw`, message: `The webhook body must be an object, not ${shown(input.raw)}` });
    else {
      const before = issues.length;
      checkRaw(input.raw, `${field}.raw`, issues);
      if (issues.length === before) issue.raw = input.raw;
    }
  }
  return issue;
}

/** Checks a map of variable names to text values. */
export function validateVariables(input: unknown, field: string, issues: ValidationIssue[]): Record<string, string> {
  const variables: Record<string, string> = {};
  if (input === undefined || input === null) return variables;
  if (!isRecord(input)) {
    issues.push({ field, message: `The variables must be an object of names to texts, not ${shown(input)}` });
    return variables;
  }
  for (const [name, value] of Object.entries(input)) {
    const subject = `The variable ${quote(name)}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) issues.push({ field: `${field}.${name}`, message: `${subject} is not a valid name: use up to 64 letters, digits and _, not starting with a digit` });
    else if (typeof value !== 'string') issues.push({ field: `${field}.${name}`, message: `${subject} must be text, not ${shown(value)}` });
    else if (value.includes('\0')) issues.push({ field: `${field}.${name}`, message: `${subject} ${nulCharacterMessage}` });
    else variables[name] = value;
  }
  return variables;
}

/** Checks `startRun`'s argument; the pipeline id is looked up by the caller. */
export function validateStartRequest(input: unknown): Required<Pick<StartRunRequest, 'pipelineId' | 'variables'>> & { issue?: Issue } {
  if (!isRecord(input)) throw new ValidationError(`startRun takes { pipelineId, issue?, variables? }, not ${shown(input)}`);
  const issues: ValidationIssue[] = [];
  if (typeof input.pipelineId !== 'string' || !input.pipelineId) issues.push({ field: 'pipelineId', message: 'Choose the pipeline to run' });
  const issue = input.issue === undefined || input.issue === null ? undefined : validateIssue(input.issue, issues);
  const variables = validateVariables(input.variables, 'variables', issues);
  if (issues.length > 0) throw new ValidationError(issues, 'Run not started:');
  return { pipelineId: input.pipelineId as string, variables, ...(issue ? { issue } : {}) };
}

/** Checks `listRuns`'s filter; undefined and null mean no filter. */
export function validateRunFilter(input: unknown): RunFilter & { limit: number } {
  if (input === undefined || input === null) return { limit: defaultListLimit };
  if (!isRecord(input)) throw new ValidationError(`listRuns takes a filter object, not ${shown(input)}`);
  const issues: ValidationIssue[] = [];
  const filter: RunFilter & { limit: number } = { limit: defaultListLimit };
  if (input.status !== undefined && input.status !== null && input.status !== '') {
    if (runStatuses.includes(input.status as RunStatus)) filter.status = input.status as RunStatus;
    else issues.push({ field: 'status', message: `The status must be one of ${runStatuses.join(', ')}, not ${shown(input.status)}` });
  }
  if (input.pipelineId !== undefined && input.pipelineId !== null && input.pipelineId !== '') {
    if (typeof input.pipelineId === 'string') filter.pipelineId = input.pipelineId;
    else issues.push({ field: 'pipelineId', message: `The pipeline must be a pipeline id, not ${shown(input.pipelineId)}` });
  }
  if (input.search !== undefined && input.search !== null && input.search !== '') {
    if (typeof input.search === 'string' && input.search.length <= 500) filter.search = input.search;
    else issues.push({ field: 'search', message: `The search must be text of up to 500 characters, not ${shown(input.search)}` });
  }
  if (input.limit !== undefined && input.limit !== null) {
    if (Number.isInteger(input.limit) && (input.limit as number) >= 1 && (input.limit as number) <= maxListLimit) filter.limit = input.limit as number;
    else issues.push({ field: 'limit', message: `The limit must be a whole number from 1 to ${maxListLimit}, not ${shown(input.limit)}` });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'Bad run filter:');
  return filter;
}

/** True when the run passes the filter (status, pipeline, and search over title, key and pipeline name). */
export function matchesFilter(run: Run, filter: RunFilter): boolean {
  if (filter.status && run.status !== filter.status) return false;
  if (filter.pipelineId && run.pipelineId !== filter.pipelineId) return false;
  if (filter.search) {
    const needle = filter.search.toLowerCase();
    const haystacks = [run.issue?.title, run.issue?.key, run.pipelineName, run.id];
    if (!haystacks.some((text) => text?.toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** The run as `snapshot` and `listRuns` show it: no step outputs, no prompts, no pipeline snapshot. */
export function slimRun(run: Run): Run {
  const { pipeline: _pipeline, ...rest } = run;
  return { ...rest, steps: run.steps.map(slimStep) };
}

function slimStep(step: StepRun): StepRun {
  const { output: _output, prompt: _prompt, systemPrompt: _systemPrompt, processGroup: _processGroup, budgetLedger: _budgetLedger, rateLimit: _rateLimit, ...rest } = step as StoredStepRun;
  return rest;
}

/**
 * A step run as run.json stores it: with the process group of the attempt while it runs, so a
 * restart after a crash can stop it (engine/recovery.ts). Never sent to a caller.
 */
export interface StoredStepRun extends StepRun {
  processGroup?: number;
  /** An agent step's spend and raised caps (core/budget.ts). */
  budgetLedger?: BudgetLedger;
  /** The model's usage-limit waits in a row (engine/rate-limit-waits.ts). */
  rateLimit?: { since: number; waits: number; continuing?: boolean };
}

/** A copy of a run for a caller, without what only the engine keeps (runs are JSON; this is faster than structuredClone). */
export function copyRun(run: Run): Run {
  const copy = JSON.parse(JSON.stringify(run)) as Run;
  for (const step of copy.steps as StoredStepRun[]) {
    delete step.processGroup;
    delete step.budgetLedger;
    delete step.rateLimit;
  }
  return copy;
}

/**
 * Decides what an approval of `step` with these arguments selects (spec: option ids "1", "2", ...;
 * unknown ids are ignored; single mode needs exactly one). Returns the known ids in option order,
 * or undefined for a step without choices. Throws ValidationError when approving cannot stand.
 */
export function resolveSelection(step: ApprovalStep, selected: unknown): string[] | undefined {
  if (!step.choices) return undefined;
  if (selected !== undefined && selected !== null && !Array.isArray(selected)) {
    throw new ValidationError(`The choice must be a list of option ids such as ["1"], not ${shown(selected)}`);
  }
  const given = new Set(((selected as unknown[] | undefined) ?? []).filter((id): id is string => typeof id === 'string'));
  const known = step.choices.options.map((_label, index) => String(index + 1)).filter((id) => given.has(id));
  const choices = step.choices.options.map((label, index) => `${index + 1} = ${label}`).join(', ');
  if (known.length === 0) throw new ValidationError(`Step \`${step.id}\` needs a choice to be approved: select one of ${choices}`);
  if (step.choices.mode === 'single' && known.length > 1) {
    throw new ValidationError(`Step \`${step.id}\` takes exactly one choice, not ${known.length} (${known.join(', ')})`);
  }
  return known;
}

/** The labels of selected option ids, in order. */
export function selectedLabels(step: ApprovalStep, selected: readonly string[] | undefined): string[] {
  if (!step.choices || !selected) return [];
  return selected.map((id) => step.choices!.options[Number(id) - 1]).filter((label): label is string => label !== undefined);
}
