// Which runner a trigger's runs use, and why, in the trigger editor's words (issue 25, point 3);
// and the choices of the runner menus of the project, pipeline and trigger editors. Pure: no DOM.
//
// The rule mirrors chooseRunner in src/core/runner-choice.ts (ui/ may import only types from core,
// test/layers.test.ts): the trigger's runner, else the pipeline's, else the project's, else local;
// a generic webhook without a secret goes to a sandbox runner when one exists, unless the runner it
// would use is a sandbox already. test/ui/runner-words.test.ts checks both agree case by case.

import type { Pipeline, Project, Runner, TriggerConfig } from '../../src/core/api';

const localId = 'local';

/** The parts of the editor's form and the snapshot the rule reads. */
export interface RunnerSources {
  trigger: Pick<TriggerConfig, 'kind' | 'webhookSecret' | 'runnerId'>;
  pipeline?: Pick<Pipeline, 'runnerId'> | undefined;
  project?: Pick<Project, 'runnerId'> | undefined;
  runners: readonly Runner[];
}

type Because = 'trigger' | 'pipeline' | 'project' | 'default' | 'untrusted';

/** Mirrors chooseRunner (core/runner-choice.ts): the runner id, and which rule chose it. */
export function runnerOfTrigger(sources: RunnerSources): { runnerId: string; because: Because; untrusted: boolean } {
  const { trigger, pipeline, project, runners } = sources;
  const untrusted = trigger.kind === 'webhook' && !trigger.webhookSecret?.trim();
  if (trigger.runnerId) return { runnerId: trigger.runnerId, because: 'trigger', untrusted };
  const chosen = pipeline?.runnerId ? { runnerId: pipeline.runnerId, because: 'pipeline' as const }
    : project?.runnerId ? { runnerId: project.runnerId, because: 'project' as const }
    : { runnerId: localId, because: 'default' as const };
  if (!untrusted || runners.find((runner) => runner.id === chosen.runnerId)?.kind === 'sandbox') return { ...chosen, untrusted };
  const sandbox = runners.find((runner) => runner.kind === 'sandbox');
  return sandbox ? { runnerId: sandbox.id, because: 'untrusted', untrusted } : { ...chosen, untrusted };
}

/** `the sandbox runner “Sandbox”`, `the ssh runner “Build box”`, `This computer` (the built-in one). */
export function runnerName(runners: readonly Runner[], id: string): string {
  const runner = runners.find((candidate) => candidate.id === id);
  if (!runner) return `the runner ${id} (deleted)`;
  return runner.kind === 'local' ? runner.name : `the ${runner.kind} runner “${runner.name}”`;
}

const untrustedWords = 'this webhook has no secret, so anyone who can reach it writes the issue';

/**
 * The editor's line: `Runs use the sandbox runner “Sandbox”: this webhook has no secret, so anyone
 * who can reach it writes the issue`, `Runs use This computer, this project's runner`, …
 */
export function triggerRunnerLine(sources: RunnerSources): string {
  const { runnerId, because, untrusted } = runnerOfTrigger(sources);
  const name = runnerName(sources.runners, runnerId);
  const why = because === 'trigger' ? `${name}, chosen above`
    : because === 'pipeline' ? `${name}, the pipeline’s runner`
    : because === 'project' ? `${name}, this project’s runner`
    : because === 'untrusted' ? `${name}: ${untrustedWords}`
    : `${name}: neither this trigger, its pipeline nor its project names a runner`;
  const warning = untrusted && because !== 'untrusted' && sources.runners.find((runner) => runner.id === runnerId)?.kind !== 'sandbox'
    ? `. Careful: ${untrustedWords}; set a secret, or add a sandbox runner in Settings → Runners`
    : '';
  return `Runs use ${why}${warning}`;
}

/**
 * The choices of a runner menu: first the default (`''`, named by `inherited`: "Project's runner
 * (This computer)"), then each runner.
 */
export function runnerChoices(runners: readonly Runner[], inherited: string): [string, string][] {
  return [['', inherited], ...runners.map((runner): [string, string] => [runner.id, runner.kind === 'local' ? runner.name : `${runner.name} (${runner.kind})`])];
}

/** The name of a runner by id for a menu's default, `This computer` when none is named. */
export function plainRunnerName(runners: readonly Runner[], id: string | undefined): string {
  return runners.find((runner) => runner.id === (id || localId))?.name ?? id ?? localId;
}
