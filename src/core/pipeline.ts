// Pipelines: validation of untrusted input and warnings (DESIGN §3 shapes; spec: savePipeline,
// checkPipeline). This file is the pipeline's own shape (its id, project, name, variables,
// harness, limits and list of steps) and the warnings about a pipeline that still saves; each
// step, kind by kind, is read in pipeline-steps.ts, and messages get their fields in words in
// pipeline-words.ts. The built-in templates are pipeline-templates.ts; duplication, export and
// import are pipeline-export.ts. Pure: the engine that calls these owns storage, the list of
// projects and harnesses, and the clock.

import type { Pipeline, PipelineExport, Step } from './api';
import { ValidationError, quote } from './errors';
import type { ValidationIssue } from './errors';
import { readBudget } from './budget';
import { readKnownRunnerId } from './runner-choice';
import { isId, newId } from './ids';
import { maxNameLength, readHarnessId, readSteps, readTextMap, type KnownAccount } from './pipeline-steps';
import { commandProblem, inWords, writtenStepIds } from './pipeline-words';
import { shellCommandProblems } from './shell-quoting';
import { listPlaceholders } from './template';
import { isAbsent, isRecord, own, readInteger, readText, shown, type Issues } from './validate';

/** What validation checks references against: the ids that exist where the pipeline is saved. */
export interface PipelineContext {
  projectIds: readonly string[];
  harnessIds: readonly string[];
  /** The accounts a pullRequest step may name (only GitHub ones will do); undefined skips the check. */
  connections?: readonly KnownAccount[];
  /** The runners a pipeline may name (`local` always); undefined skips the check. */
  runnerIds?: readonly string[];
}

const maxDescriptionLength = 5_000;
const parallelRunsRange = { min: 1, max: 100 };

// ───────────────────────────── Pipelines ─────────────────────────────

type PipelineBody = Omit<PipelineExport, 'servicePipeline'>;

/** Every field a pipeline and its export share; `harnessIds` (`connections`) undefined skips the harness (account) check. */
function readPipelineBody(record: Record<string, unknown>, harnessIds: readonly string[] | undefined, issues: Issues, connections?: readonly KnownAccount[]): PipelineBody {
  const name = readText(record, 'name', 'name', { max: maxNameLength, trim: true, required: 'is empty: give the pipeline a name' }, issues);
  const description = readText(record, 'description', 'description', { max: maxDescriptionLength, trim: true }, issues);
  const variables = readTextMap(record, 'variables', 'variables', issues);
  const harnessId = readHarnessId(record, 'harnessId', harnessIds, issues);
  const model = readText(record, 'model', 'model', { max: maxNameLength, trim: true }, issues);
  const maxParallelRuns = readInteger(record, 'maxParallelRuns', 'maxParallelRuns', parallelRunsRange, issues);
  const budget = readBudget(record, 'budget', 'budget', issues, true);
  const steps = readSteps(record, harnessIds, issues, connections);
  const body: PipelineBody = { name: name ?? '', variables, steps };
  if (description !== undefined) body.description = description;
  if (harnessId !== undefined) body.harnessId = harnessId;
  if (model !== undefined) body.model = model;
  if (maxParallelRuns !== undefined) body.maxParallelRuns = maxParallelRuns;
  if (budget !== undefined) body.budget = budget;
  return body;
}

/** `body` with its fields in the order of the Pipeline type, so stored files read the same way. */
export function assemblePipeline(id: string, projectId: string, body: PipelineBody, createdAt: number, updatedAt: number): Pipeline {
  return {
    id,
    projectId,
    name: body.name,
    ...(body.description === undefined ? {} : { description: body.description }),
    variables: body.variables,
    ...(body.harnessId === undefined ? {} : { harnessId: body.harnessId }),
    ...(body.model === undefined ? {} : { model: body.model }),
    ...(body.maxParallelRuns === undefined ? {} : { maxParallelRuns: body.maxParallelRuns }),
    ...(body.budget === undefined ? {} : { budget: body.budget }),
    steps: body.steps,
    createdAt,
    updatedAt,
  };
}

/** Reads untrusted input: the pipeline when it is valid, and what was readable of it either way. */
function readPipeline(input: unknown, context: PipelineContext, now: number): { pipeline?: Pipeline; body?: PipelineBody; issues: Issues; stepIds: unknown[] } {
  if (!isRecord(input)) return { issues: [{ field: '', message: `A pipeline must be an object, not ${shown(input)}` }], stepIds: [] };
  const issues: Issues = [];

  const rawId = own(input, 'id');
  let id: string | undefined;
  if (!isAbsent(rawId) && rawId !== '') {
    const trimmed = typeof rawId === 'string' ? rawId.trim() : rawId;
    if (isId(trimmed, 'pl')) id = trimmed;
    else issues.push({ field: 'id', message: `${shown(rawId)} is not a pipeline id such as pl_0123456789abcdef; leave it empty to create a pipeline` });
  }
  const projectId = readText(input, 'projectId', 'projectId', { max: maxNameLength, trim: true, required: 'is not chosen: a pipeline belongs to a project' }, issues);
  if (projectId !== undefined && !context.projectIds.includes(projectId)) {
    issues.push({ field: 'projectId', message: `${quote(projectId)} is not a known project: choose one` });
  }
  const body = readPipelineBody(input, context.harnessIds, issues, context.connections);
  const runnerId = readKnownRunnerId(input, context.runnerIds, issues);
  const stepIds = writtenStepIds(input);
  if (issues.length > 0) return { body, issues: inWords(issues, stepIds), stepIds };

  const givenCreatedAt = own(input, 'createdAt');
  const createdAt = id !== undefined && typeof givenCreatedAt === 'number' && Number.isFinite(givenCreatedAt) && givenCreatedAt >= 0 ? givenCreatedAt : now;
  const pipeline = assemblePipeline(id ?? newId('pl'), projectId ?? '', body, createdAt, now);
  if (runnerId !== undefined) pipeline.runnerId = runnerId;
  return { pipeline, body, issues, stepIds };
}

/**
 * Validates untrusted input (any JSON value) and returns a clean Pipeline: only known fields, names
 * and ids trimmed, blank optional texts dropped, fresh objects throughout (the input is not kept).
 * An empty or missing `id` creates: a new `pl_` id and `createdAt = now`. A given id keeps the
 * input's `createdAt` when it is a valid time (the caller should put back the stored one);
 * `updatedAt` is always `now`. Approval steps lose `retries`, `timeoutSec` and `continueOnError`.
 * Throws ValidationError listing every issue, with fields such as `steps.deploy.command` or
 * `steps.#2.id` (1-based, for a step without a usable id) in `issues`, and messages that name the
 * field in words (`inWords`): the error's message has no field paths. Text holding NUL is refused (no
 * process can be given it), and so is a shell command with a placeholder where the shell runs
 * text as code (`shellCommandProblems`).
 */
export function validatePipeline(input: unknown, context: PipelineContext, now: number): Pipeline {
  const { pipeline, issues } = readPipeline(input, context, now);
  if (!pipeline) throw new ValidationError(issues);
  return pipeline;
}

/**
 * What `validatePipeline` would refuse (`problems`) and what `pipelineWarnings` says about the
 * steps that are valid (`warnings`), without throwing: for an editor checking a draft.
 */
export function checkPipeline(input: unknown, context: PipelineContext, now: number): { problems: ValidationIssue[]; warnings: ValidationIssue[] } {
  const { body, issues, stepIds } = readPipeline(input, context, now);
  return { problems: issues, warnings: body ? pipelineWarnings(body, stepIds) : [] };
}

// ───────────────────────────── Warnings ─────────────────────────────

/** The templated texts of a step with their field paths. */
function templatedFields(step: Step): [field: string, text: string][] {
  const path = `steps.${step.id}`;
  if (step.kind === 'shell') {
    return [[`${path}.command`, step.command], ...Object.entries(step.env ?? {}).map(([name, value]): [string, string] => [`${path}.env.${name}`, value])];
  }
  if (step.kind === 'agent') {
    return step.systemPrompt === undefined ? [[`${path}.prompt`, step.prompt]] : [[`${path}.prompt`, step.prompt], [`${path}.systemPrompt`, step.systemPrompt]];
  }
  if (step.kind === 'pullRequest') {
    return [[`${path}.title`, step.title], [`${path}.body`, step.body]].filter((field): field is [string, string] => field[1] !== undefined);
  }
  return [[`${path}.message`, step.message]];
}

/**
 * Problems that do not block saving, for the editor to show beside the field: a placeholder of a
 * shell command that another command parses as code again (`sh -c`, `eval`, a pipe into `sh`, …),
 * that stands in single quotes, or in a quoted here-document (see `shellCommandProblems`), and
 * `{{vars.<name>}}` with no default in the pipeline's variables (it is empty unless the run sets
 * it). Reads only the steps and variables, so it works on the valid part of a pipeline too:
 * `stepIds` are then the ids as written, to number the steps as the person sees them.
 */
export function pipelineWarnings(pipeline: Pick<Pipeline, 'steps' | 'variables'>, stepIds: readonly unknown[] = pipeline.steps.map((step) => step.id)): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  for (const step of pipeline.steps) {
    if (step.kind === 'shell') {
      for (const problem of shellCommandProblems(step.command, step.env)) {
        if (problem.severity === 'warning') warnings.push({ field: `steps.${step.id}.command`, message: commandProblem(problem.message) });
      }
    }
    for (const [field, text] of templatedFields(step)) {
      const reported = new Set<string>();
      for (const placeholder of listPlaceholders(text)) {
        const [root, name, ...rest] = placeholder.path.split('.');
        if (root !== 'vars' || !name || rest.length > 0 || reported.has(name)) continue;
        if (Object.prototype.hasOwnProperty.call(pipeline.variables, name)) continue;
        reported.add(name);
        warnings.push({ field, message: `uses ${quote(`{{vars.${name}}}`)}, which has no default in the pipeline's variables; it is empty unless the run sets it` });
      }
    }
  }
  return inWords(warnings, stepIds);
}

/**
 * The fields and steps of an export, checked as `validatePipeline` checks them, except that harness
 * ids are not compared with known harnesses (the caller assigns a project and validates again,
 * which checks them). Throws ValidationError with the problems in words.
 */
export function validatePipelineBody(data: Record<string, unknown>): PipelineBody {
  const issues: Issues = [];
  const body = readPipelineBody(data, undefined, issues);
  if (issues.length > 0) throw new ValidationError(inWords(issues, writtenStepIds(data)));
  return body;
}
