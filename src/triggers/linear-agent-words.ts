// What a Linear agent session shows of a run, in words: what a step runs, how it ended, the
// question a waiting step asks, and the run's end (its outcome, pull requests and link).

import type { Connection, Pipeline, Run, StepRun } from '../core/api';
import { formatDuration } from '../core/runs';
import { runPullRequests } from './github-pulls';
import type { PlannedActivity } from './linear-agent-activities';

/** Characters of a command, message or error quoted in an activity. */
const quoteLimit = 300;

/** What a step runs, in a line: its command, its agent and model, its message, its pull request. */
export function whatStepRuns(run: Readonly<Run>, stepRun: Readonly<StepRun>): string {
  const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
  switch (step?.kind) {
    case 'shell':
      return cut(step.command);
    case 'agent':
      return [step.harnessId ?? run.pipeline?.harnessId ?? 'the default agent', step.model ?? run.pipeline?.model].filter(Boolean).join(' · ');
    case 'approval':
      return cut(stepRun.message ?? step.message);
    case 'pullRequest':
      return `pull request to ${step.repository ?? 'the remote\'s repository'}${step.base ? ` · ${step.base}` : ''}`;
    default:
      return stepRun.kind;
  }
}

/** The `select` signal and its options for a step with choices (option values are the option ids). */
export function choiceSignal(step: Pipeline['steps'][number] | undefined): Pick<PlannedActivity, 'signal' | 'signalMetadata'> {
  if (step?.kind !== 'approval' || !step.choices?.options.length) return {};
  return { signal: 'select', signalMetadata: { options: step.choices.options.map((label, index) => ({ label, value: String(index + 1) })) } };
}

/** At most `limit` characters, on one line when short. */
export function cut(value: string, limit = quoteLimit): string {
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

/** How a step ended, in a line: its outcome, who decided, how long it took. */
export function stepOutcomeLine(step: Readonly<StepRun>): string {
  const took = step.startedAt !== undefined && step.finishedAt !== undefined ? ` in ${formatDuration(step.finishedAt - step.startedAt)}` : '';
  const by = step.approval?.by ? ` by ${step.approval.by.name}${step.approval.by.via === 'linear' ? '' : ` (via ${step.approval.by.via})`}` : '';
  const comment = step.approval?.comment ? `: ${cut(step.approval.comment, 120)}` : '';
  switch (step.status) {
    case 'succeeded':
      return step.kind === 'approval' ? `Approved${by}${comment}` : `Succeeded${took}`;
    case 'rejected':
      return `Rejected${by}${comment}`;
    case 'failed':
      return `Failed${took}: ${cut(step.error ?? (step.exitCode !== undefined ? `exit code ${step.exitCode}` : 'unknown error'), 200)}`;
    default:
      return `${step.status[0]!.toUpperCase()}${step.status.slice(1)}${took}`;
  }
}

/**
 * The session's last words on a finished run: its outcome (`stopped`: Linear asked to stop it), its
 * pull requests (linked when their account is known), and the run's page when it has an address.
 */
export function runEndLines(run: Readonly<Run>, stopped: boolean, url: string | undefined, connection: (id: string | undefined) => Connection | undefined): string[] {
  const pulls = runPullRequests(run, connection).map(({ repository, number, link }) => (link ? `[${repository}#${number}](${link})` : `${repository}#${number}`));
  return [
    run.status === 'succeeded' ? `Done: **${run.pipelineName}** succeeded.`
      : run.status === 'cancelled' ? (stopped ? 'Stopped as asked: the run was cancelled.' : 'The run was cancelled.')
        : run.status === 'rejected' ? `Rejected: ${cut(run.error ?? 'a step was rejected')}`
          : `The run failed: ${cut(run.error === 'interrupted' ? 'Factory stopped while it ran' : run.error ?? 'unknown error')}`,
    ...pulls.map((pull) => `Pull request: ${pull}`),
    ...(url ? [`Run: ${url}`] : []),
  ];
}
