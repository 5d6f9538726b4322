// Which runner a run uses (issue 25, points 2 and 3), and why, in words: the trigger's runner, else
// the pipeline's, else the project's, else this computer. A trigger whose issues anyone outside
// can write (a generic webhook without a secret) is untrusted: without a runner of its own its runs
// go to a sandbox runner when one exists, even where the pipeline or project names another kind.
// Whether a GitHub repository is public is not known to Factory (it is not read from GitHub), so
// a GitHub trigger is not counted as untrusted here; its editor says so.

import type { Pipeline, Project, Runner, TriggerConfig } from './api';
import { quote, type ValidationIssue } from './errors';
import { localRunner, readRunnerId } from './runners';

interface RunnerChoice {
  runnerId: string;
  /** Why, for the trigger's editor and state: `the trigger names it`, `a webhook without a secret: …`. */
  reason: string;
}

/** True when anyone who can reach the trigger can write its issues: a generic webhook without a secret. */
export function isUntrustedTrigger(trigger: Pick<TriggerConfig, 'kind' | 'webhookSecret'>): boolean {
  return trigger.kind === 'webhook' && !trigger.webhookSecret?.trim();
}

/** The runner a run of `pipeline` (started by `trigger`, when one did) uses, with the reason in words. */
export function chooseRunner(sources: {
  trigger?: Pick<TriggerConfig, 'kind' | 'webhookSecret' | 'runnerId'> | undefined;
  pipeline: Pick<Pipeline, 'runnerId'>;
  project?: Pick<Project, 'runnerId'> | undefined;
  runners: readonly Runner[];
}): RunnerChoice {
  const { trigger, pipeline, project, runners } = sources;
  if (trigger?.runnerId) return { runnerId: trigger.runnerId, reason: 'the trigger names it' };
  const chosen = pipeline.runnerId ? { runnerId: pipeline.runnerId, reason: 'the pipeline names it' }
    : project?.runnerId ? { runnerId: project.runnerId, reason: 'the project names it' }
    : { runnerId: localRunner.id, reason: 'neither the trigger, the pipeline nor the project names one' };
  if (!trigger || !isUntrustedTrigger(trigger)) return chosen;
  const chosenRunner = runners.find((runner) => runner.id === chosen.runnerId);
  if (chosenRunner?.kind === 'sandbox') return chosen;
  const sandbox = runners.find((runner) => runner.kind === 'sandbox');
  if (sandbox) return { runnerId: sandbox.id, reason: 'anyone who can reach this webhook can write its issues (it has no secret), so its runs are sandboxed' };
  return { ...chosen, reason: `${chosen.reason}; this webhook has no secret, so anyone who can reach it can write its issues: add a sandbox runner in Settings → Runners to run them sandboxed` };
}

/**
 * Reads an optional `runnerId` of a pipeline or trigger that must name a runner of `runnerIds`
 * (`local` always exists); without a list (an import), any runner id passes. Problems go to `issues`.
 */
export function readKnownRunnerId(record: Record<string, unknown>, runnerIds: readonly string[] | undefined, issues: ValidationIssue[]): string | undefined {
  const runnerId = readRunnerId(record, 'runnerId', issues);
  if (runnerId === undefined || runnerId === localRunner.id || runnerIds === undefined || runnerIds.includes(runnerId)) return runnerId;
  issues.push({ field: 'runnerId', message: `The runner ${quote(runnerId)} does not exist: choose one from Settings → Runners` });
  return undefined;
}
