// Why a run or one of its steps ended badly, in words for people, with what to do next. The run's
// header says the run's problem once; the step pane says a step's (run-view.ts, run-notices.ts).

import type { Run } from '../../src/core/api';
import { errorBeforeCause } from './failure-cause';

/** The setup log is selected with this step id, as in LogLine. */
export const setupStepId = '';

/** A problem in words, with what to do: a link, or the step whose log shows why ('' the setup log). */
interface Problem {
  text: string;
  link?: [href: string, text: string];
  stepId?: string;
}

/** Text for people: `code` marks become quotes. */
const plain = (text: string) => text.replace(/`([^`]*)`/g, '“$1”').replace(/\.$/, '');

export function stepProblem(name: string, error: string): Problem {
  const harness = /^(.+?) is not installed:(?:.*install it with `([^`]+)`)?/.exec(error);
  const link: Problem['link'] = /harness/i.test(error) || harness ? ['#/harnesses', 'Harnesses'] : undefined;
  if (harness) return { text: `${harness[1]} is not installed: install it${harness[2] ? ` (${harness[2]})` : ''} or pick another harness in the pipeline.`, link };
  return { text: `“${name}” failed: ${plain(error).replace(/^[A-Z](?=[a-z])/, (letter) => letter.toLowerCase())}. Its log shows why; Retry runs it again.`, link };
}

/** Why a run ended badly, said once (the failed step's pane does not repeat it). */
export function runProblem(run: Run): Problem | undefined {
  const error = run.error;
  const name = (id: string) => run.steps.find((step) => step.id === id)?.name ?? id;
  if (!error) return undefined;
  const failed = /^Step `([^`]+)` failed: ([\s\S]*)$/.exec(error);
  // A step whose harness cannot run printed nothing: no log to show, the link says where to go.
  const failedStep = failed ? run.steps.find((step) => step.id === failed[1]) : undefined;
  const problem = failed && stepProblem(name(failed[1]!), failedStep ? errorBeforeCause(failed[2]!, failedStep) : failed[2]!);
  if (problem) return problem.link ? problem : { ...problem, stepId: failed![1]! };
  const rejected = /^Rejected at step `([^`]+)`/.exec(error);
  if (rejected) return { text: `Rejected at “${name(rejected[1]!)}”.` };
  if (error.startsWith('Setup failed: ')) return { text: `The setup failed: ${plain(error.slice(14))}.`, stepId: setupStepId };
  if (error === 'interrupted') return { text: 'Factory stopped while this run was running: retry it.' };
  return { text: `${plain(error)}.` };
}
