// Answers from prompts: what a person writes in a Linear agent session while its run waits decides
// the waiting step (approve or reject with a comment, or the options chosen), and while it works is
// guidance for the next agent step. Each prompt gets one reply in the session.

import type { ApprovalStep, Run } from '../core/api';
import { ConflictError, FactoryError } from '../core/errors';
import type { RunService } from '../engine/runs';
import type { PlannedActivity } from './linear-agent-activities';
import { choiceSignal, cut } from './linear-agent-words';
import type { AgentActivityContent, AgentSessionEvent } from './providers/linear-agent';

/** What answering a prompt needs. */
export interface PromptPorts {
  runs: Pick<RunService, 'approveStep' | 'getRun' | 'logRunNote'>;
  /** Plans the session's reply to this prompt (a second one plans nothing). */
  reply: (content: AgentActivityContent, extra?: Pick<PlannedActivity, 'signal' | 'signalMetadata'>) => void;
  /** Writes a decision in the trigger's ledger. */
  record: (decision: string, key?: string, runId?: string) => void;
}

type Prompt = NonNullable<AgentSessionEvent['activity']>;

const approveWords = new Set(['approve', 'approved', 'yes', 'y', 'ok', 'okay', 'lgtm', 'go', 'continue', '👍']);
const rejectWords = new Set(['reject', 'rejected', 'no', 'n', 'deny', 'decline', '👎']);

/** A person's answer to a waiting step, read from their words in Linear. */
interface ApprovalAnswer {
  approved: boolean;
  comment?: string;
  /** Option ids ("1", "2", ...). */
  selected?: string[];
}

/**
 * How a `prompted` text decides a waiting step: for a step with choices, an option's value ("2")
 * or label (any case; several separated by commas for a multiple choice) approves with those; a
 * first word `approve`/`yes`/`ok`/`lgtm`… approves and `reject`/`no`/`deny`… rejects, the rest of
 * the text being the comment. Any other text decides nothing (undefined): a question is not a
 * verdict, so Factory asks again (DECISIONS "Triggers").
 */
export function readApprovalAnswer(body: string, step: ApprovalStep | undefined): ApprovalAnswer | undefined {
  const words = body.trim();
  if (!words) return undefined;
  const options = step?.choices?.options ?? [];
  if (options.length > 0) {
    const parts = words.split(/\s*[,\n]\s*/).filter(Boolean);
    const ids = parts.map((part) => {
      const index = options.findIndex((label, at) => part === String(at + 1) || part.toLowerCase() === label.toLowerCase());
      return index >= 0 ? String(index + 1) : undefined;
    });
    if (ids.every((id) => id !== undefined) && (step!.choices!.mode === 'multiple' || ids.length === 1)) return { approved: true, selected: [...new Set(ids as string[])] };
  }
  const [, first = '', rest = ''] = /^(\S+?)[\s.!:,;-]*(?:\s+([\s\S]*))?$/u.exec(words) ?? [];
  const word = first.toLowerCase().replace(/[.!:,;-]+$/, '');
  const comment = rest.trim() ? { comment: rest.trim() } : {};
  if (approveWords.has(word)) return { approved: true, ...comment };
  if (rejectWords.has(word)) return { approved: false, ...comment };
  return undefined;
}

/** How to answer a waiting step, for the question Factory asks in the session. */
export function answerHelp(step: ApprovalStep | undefined): string {
  const choices = step?.choices?.options.length ? `Choose ${step.choices.mode === 'multiple' ? 'one or more (separated by commas)' : 'one'} of: ${step.choices.options.map((label, index) => `${index + 1} = ${label}`).join(', ')}; or answer` : 'Answer';
  return `${choices} **approve** or **reject**, anything after it being the comment.`;
}

/** Decides the waiting step with the person's answer; a text that is no answer is asked again. */
export async function answerWaitingStep(ports: PromptPorts, run: Run, activity: Prompt, name: string, key: string | undefined): Promise<void> {
  const { runs, reply, record } = ports;
  const stepRun = run.steps.find((step) => step.status === 'waiting');
  const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun?.id);
  if (!stepRun) return;
  const answer = readApprovalAnswer(activity.body, step?.kind === 'approval' ? step : undefined);
  const askAgain = (why: string) => {
    runs.logRunNote(run.id, `Linear: ${name} wrote “${cut(activity.body)}” on the waiting step ${stepRun.id}; it decides nothing`);
    reply({ type: 'elicitation', body: `${why} ${answerHelp(step?.kind === 'approval' ? step : undefined)}` }, choiceSignal(step));
    record(`not an answer from ${name}: asked again`, key, run.id);
  };
  if (!answer) return askAgain(`Factory did not read “${cut(activity.body, 80)}” as a decision.`);
  try {
    await runs.approveStep(run.id, stepRun.id, answer.approved, answer.comment, answer.selected, { name, via: 'linear' });
    record(`${answer.approved ? 'approved' : 'rejected'} ${stepRun.id} by ${name}`, key, run.id);
  } catch (error) {
    if (error instanceof ConflictError) {
      const decided = (await runs.getRun(run.id).catch(() => undefined))?.steps.find((step) => step.id === stepRun.id)?.approval?.by;
      reply({ type: 'thought', body: `Already decided${decided ? ` by ${decided.name} via ${decided.via}` : ''}: this answer changed nothing.` });
      record(`too late: ${stepRun.id} was already decided`, key, run.id);
    } else if (error instanceof FactoryError) askAgain(`${error.message}.`);
    else throw error;
  }
}

/** Text while the run works: guidance (kept in `guidance`) for the next agent step, else a note in the run's log. */
export function guideNextAgentStep(ports: PromptPorts, guidance: { text: string; stepId?: string }[], run: Run, activity: Prompt, name: string): void {
  const current = run.steps.findIndex((step) => step.status === 'running' || step.status === 'pending');
  const nextAgent = run.steps.slice(current < 0 ? run.steps.length : current).find((step) => step.kind === 'agent' && step.status === 'pending');
  if (nextAgent) {
    guidance.push({ text: `${name}: ${activity.body}` });
    ports.runs.logRunNote(run.id, `Linear: guidance from ${name} for the next agent step (${nextAgent.id})`);
    ports.reply({ type: 'thought', body: `Noted: the next agent step, ${nextAgent.name}, gets this as guidance.` });
  } else {
    ports.runs.logRunNote(run.id, `Linear: ${name} wrote “${cut(activity.body)}” (no agent step is left to take it)`);
    ports.reply({ type: 'thought', body: 'Noted in the run\'s log: no agent step is left to take it as guidance.' });
  }
}
