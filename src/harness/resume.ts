// How an agent step of a follow-up run picks up where the earlier run on its branch left off
// (issue 23.4): it resumes that run's agent session when the same harness made it and the harness
// can resume (HarnessDefinition.resume), else it starts fresh with that run's summary (its last
// agent answer) before the prompt. A session the CLI cannot find falls back to the same fresh start.

import type { HarnessDefinition } from '../core/api';
import { errorMessage } from '../core/errors';
import type { EarlierAgentWork } from '../engine/steps';
import { carryClaudeTranscript, type CarryResult } from './claude-sessions';

/** The longest summary put before a fresh prompt, in characters (an answer, not a transcript). */
const maxSummaryLength = 4000;

/** What each CLI says when it has no session with the id it was given (PROVIDERS.md §7). */
export const sessionNotFoundPattern = /No conversation found with session ID|No saved session found with ID|Invalid session identifier/i;

/** Per output format: what makes a session resumable in another folder (Claude Code keeps sessions by folder). */
const sessionCarriers: Readonly<Record<string, (options: { sessionId: string; fromFolder?: string; toFolder: string; environment: Record<string, string> }) => Promise<CarryResult>>> = {
  'claude-stream-json': carryClaudeTranscript,
};

interface ResumePlan {
  /** The earlier run. */
  runId: string;
  /** The session to resume; absent: start fresh. */
  sessionId?: string;
  /** The earlier run's summary, for a fresh start (now, or after the CLI did not find the session). */
  summary?: string;
  /** The log line that says what was decided and why. */
  note: string;
}

/**
 * Decides how an agent step with harness `definition` continues `earlier`: resume the last session
 * that harness made there, when it can (after carrying the session to `workspace` where the CLI
 * needs it), else start fresh with the summary. Never throws: a failed copy is a fresh start.
 */
export async function planResume(
  earlier: EarlierAgentWork,
  definition: HarnessDefinition,
  context: { defaultHarnessId: string; workspace: string; environment: Record<string, string> },
): Promise<ResumePlan> {
  const { runId } = earlier;
  const summary = summaryOf(earlier);
  const withSummary = summary ? `starting fresh with the summary of run ${runId}` : `starting fresh (run ${runId} left no summary)`;
  const base = { runId, ...(summary ? { summary } : {}) };
  const session = earlier.steps.filter((step) => step.sessionId && (step.harnessId ?? context.defaultHarnessId) === definition.id).at(-1)?.sessionId;
  if (!session) return { ...base, note: `Run ${runId} left no ${definition.name} session: ${withSummary}` };
  if (!definition.resume?.length) return { ...base, note: `${definition.name} cannot resume a session (the harness has no resume arguments): ${withSummary}` };
  const carry = sessionCarriers[definition.output];
  if (carry) {
    const carried = await carry({ sessionId: session, ...(earlier.workspace ? { fromFolder: earlier.workspace } : {}), toFolder: context.workspace, environment: context.environment })
      .catch((error): CarryResult => ({ ok: false, reason: `copying its transcript failed: ${errorMessage(error)}` }));
    if (!carried.ok) return { ...base, note: `Cannot resume ${definition.name} session ${session} from run ${runId}: ${carried.reason}; ${withSummary}` };
    if (carried.copiedFrom) return { ...base, sessionId: session, note: `Resuming ${definition.name} session ${session} from run ${runId} (its transcript copied from ${carried.copiedFrom})` };
  }
  return { ...base, sessionId: session, note: `Resuming ${definition.name} session ${session} from run ${runId}` };
}

/** The prompt of a fresh start: the earlier run's summary, then the step's own prompt. */
export function promptWithSummary(prompt: string, plan: Pick<ResumePlan, 'runId' | 'summary'>): string {
  if (!plan.summary) return prompt;
  return `This continues the work of run ${plan.runId} on the same branch. That run ended with this summary:\n\n${plan.summary}\n\n---\n\n${prompt}`;
}

/** The last agent answer of the earlier run, trimmed and cut to maxSummaryLength; undefined when there is none. */
function summaryOf(earlier: EarlierAgentWork): string | undefined {
  const output = earlier.steps.filter((step) => step.output?.trim()).at(-1)?.output?.trim();
  if (!output) return undefined;
  return output.length > maxSummaryLength ? `${output.slice(0, maxSummaryLength - 1)}…` : output;
}
