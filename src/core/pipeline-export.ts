// Duplicating, exporting and importing pipelines (spec: duplicatePipeline, exportPipeline,
// importPipeline; the export format is PipelineExport in api.ts).

import type { Pipeline, PipelineExport, PipelineInput } from './api';
import { ValidationError, errorMessage } from './errors';
import { newId } from './ids';
import { assemblePipeline, validatePipelineBody } from './pipeline';
import { maxNameLength } from './pipeline-steps';
import { isRecord, own, shown } from './validate';

const copySuffix = ' (copy)';
const exportVersion = 1;

/** A deep copy of plain data (steps hold only texts, numbers, booleans, lists and objects). */
function copyData<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * A copy of `pipeline` with a fresh `pl_` id, both times `now`, the same project, variables and
 * steps (deep copies), and the name followed by ` (copy)` (the original name is cut so the result
 * stays within 200 characters).
 */
export function duplicatePipeline(pipeline: Pipeline, now: number): Pipeline {
  const name = pipeline.name.slice(0, maxNameLength - copySuffix.length) + copySuffix;
  return assemblePipeline(newId('pl'), pipeline.projectId, { ...copyData(pipeline), name }, now, now);
}

/**
 * The export text (spec: `servicePipeline` = 1, first), pretty JSON. It carries no id, project or
 * times, and the values of every step's `env` are replaced by '' (they may hold tokens): the names
 * stay, so whoever imports it sees what to fill in. Pipeline variables are kept as they are.
 */
export function exportPipeline(pipeline: Pipeline): string {
  const steps = copyData(pipeline.steps).map((step) => {
    if (step.kind === 'shell' && step.env) step.env = Object.fromEntries(Object.keys(step.env).map((name) => [name, '']));
    return step;
  });
  const exported: PipelineExport = {
    servicePipeline: exportVersion,
    name: pipeline.name,
    ...(pipeline.description === undefined ? {} : { description: pipeline.description }),
    variables: { ...pipeline.variables },
    ...(pipeline.harnessId === undefined ? {} : { harnessId: pipeline.harnessId }),
    ...(pipeline.model === undefined ? {} : { model: pipeline.model }),
    ...(pipeline.maxParallelRuns === undefined ? {} : { maxParallelRuns: pipeline.maxParallelRuns }),
    ...(pipeline.budget === undefined ? {} : { budget: { ...pipeline.budget } }),
    steps,
  };
  return JSON.stringify(exported, null, 2);
}

/**
 * Reads an export text: the pipeline without id, project or times, its fields and steps checked as
 * `validatePipeline` checks them, except that harness ids are not compared with known harnesses
 * (the caller assigns a project and validates again, which checks them). Throws ValidationError for
 * text that is not JSON, has no `servicePipeline` marker, carries a version other than 1, or does
 * not fit.
 */
export function parsePipelineExport(json: string): Omit<PipelineInput, 'projectId'> {
  if (typeof json !== 'string') throw new ValidationError(`This is not JSON: expected text, not ${shown(json)}`);
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new ValidationError(`This is not JSON: ${errorMessage(error).slice(0, 200)}`);
  }
  if (!isRecord(data)) throw new ValidationError(`This is not a Factory pipeline export: expected a JSON object, not ${shown(data)}`);
  const version = own(data, 'servicePipeline');
  if (version === undefined) throw new ValidationError('This is not a Factory pipeline export: the field servicePipeline is missing');
  if (version !== exportVersion) {
    const written = typeof version === 'number' ? String(version) : shown(version);
    throw new ValidationError(`This is not a pipeline export this Factory can read: servicePipeline version ${written} is not supported; this Factory reads version ${exportVersion}`);
  }
  return validatePipelineBody(data);
}
