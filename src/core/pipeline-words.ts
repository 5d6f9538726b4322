// Field messages in words (DESIGN §3; spec: savePipeline, checkPipeline): each problem of a
// pipeline or a step, whose field is a path such as `steps.deploy.command`, gets its field said the
// way a person names it, so the message reads alone wherever it is shown (a toast, the remote API).

import { quote } from './errors';
import { isRecord, own, type Issues } from './validate';

/** The fields of a pipeline and of a step, as a person names them. */
const fieldWords: Record<string, string> = {
  projectId: 'project', harnessId: 'harness', maxParallelRuns: 'maximum of parallel runs', steps: 'list of steps', env: 'environment variables',
  systemPrompt: 'system prompt', stallSec: 'stall warning', onStall: 'stall action', 'choices.mode': 'choice mode', 'choices.options': 'options', timeoutSec: 'timeout',
  continueOnError: 'switch “Continue the run when this step fails”', connectionId: 'account', base: 'base branch',
  budget: 'budget', 'budget.maxCostUsd': 'cost cap', 'budget.maxTokens': 'token cap', 'budget.maxMinutes': 'time cap (minutes)',
};

/** The trimmed ids of the steps as written (anything else as undefined), to number the steps a field path names by id. */
export function writtenStepIds(record: Record<string, unknown>): unknown[] {
  const steps = own(record, 'steps');
  return Array.isArray(steps) ? steps.map((raw) => (isRecord(raw) && typeof own(raw, 'id') === 'string' ? (own(raw, 'id') as string).trim() : undefined)) : [];
}

/**
 * Puts the field in words before each message, so that it reads alone wherever it is shown (a
 * toast, the remote API): `steps.#2.id` with "`Bad Id!` may use only …" becomes "Step 2: the id
 * `Bad Id!` may use only …"; `variables.x` names "The variable `x`". The field paths stay.
 */
export function inWords(issues: Issues, stepIds: readonly unknown[]): Issues {
  return issues.map(({ field, message }) => {
    const parts = field ? field.split('.') : [];
    let step = '';
    if (parts[0] === 'steps' && parts.length > 1) {
      const key = parts[1]!;
      step = `Step ${key.startsWith('#') ? key.slice(1) : stepIds.indexOf(key) + 1}`;
      parts.splice(0, 2);
    }
    const [root = '', ...rest] = parts;
    const words = (root === 'env' || root === 'variables') && rest.length > 0 ? `${root === 'env' ? 'environment variable' : 'variable'} ${quote(rest.join('.'))}` : fieldWords[parts.join('.')] ?? parts.join(' ');
    const subject = !words ? step : step ? `${step}: the ${words}` : `The ${words}`;
    return { field, message: subject ? `${subject} ${message}` : message };
  });
}

/** A problem of a placeholder in a command (`shellCommandProblems`), to follow "the command". */
export function commandProblem(message: string): string {
  return message.replace(/^(`[^`]*`) /, 'has $1, which ');
}
