// Turns a harness definition and one request (prompt, system prompt, model) into the exact argv of
// the CLI (DESIGN §4). There is no shell anywhere: each args element is rendered on its own and
// stays one argv element, and values are inserted once, never re-read as templates.

import type { HarnessDefinition } from '../core/api';
import { ValidationError, quote } from '../core/errors';

/**
 * Matches one placeholder of args: prompt, model or systemPrompt are the only ones args may use;
 * anything else in `{{ }}` is refused when a harness is saved.
 */
export const placeholderPattern = /\{\{(prompt|model|systemPrompt)\}\}/g;
/** The args element that stands for the prompt when it goes as an argument. */
export const promptElement = '{{prompt}}';
/** The one placeholder of a harness's `resume` arguments. */
export const sessionIdElement = '{{sessionId}}';

interface InvocationRequest {
  prompt: string;
  systemPrompt?: string;
  model?: string;
  /** An earlier session to resume through the definition's `resume` arguments (ignored without them). */
  resumeSessionId?: string;
}

export interface Invocation {
  command: string;
  args: string[];
  /** The prompt, for a harness that reads it from stdin; absent for 'arg'. */
  stdin?: string;
}

/**
 * Builds the command line for one request.
 *
 * - `{{model}}` and `{{systemPrompt}}` are replaced in each element separately. An element that
 *   uses them and renders empty is dropped, and when it was exactly the placeholder the flag just
 *   before it (`--model`) goes too: an empty model means the CLI's own default.
 * - A value starting with `-` after a long flag is joined to it (`--append-system-prompt=-x`) so
 *   the CLI cannot read it as a flag of its own.
 * - promptVia 'stdin': the prompt is `stdin`. promptVia 'arg': the prompt replaces the `{{prompt}}`
 *   element verbatim; when it starts with `-` and args do not already put `--` before it, `--` is
 *   inserted, since a prompt read as a flag would be worse than a stray `--` for any CLI.
 *
 * - `resumeSessionId` with `resume` arguments: those, `{{sessionId}}` replaced, go just before the
 *   prompt: before the `{{prompt}}` element (and a `--` just before it), or on stdin before a final
 *   `-` (Codex's `exec … resume <id> -`), else at the end.
 *
 * Throws ValidationError for a value containing NUL (argv cannot carry it), a model starting with
 * `-` after a short flag, a session id starting with `-`, or an 'arg' definition without its
 * `{{prompt}}` element.
 */
export function buildInvocation(
  definition: Pick<HarnessDefinition, 'command' | 'args' | 'promptVia' | 'resume'>,
  request: InvocationRequest,
): Invocation {
  const values: Record<string, string> = {
    model: checkValue('model', request.model ?? ''),
    systemPrompt: checkValue('systemPrompt', request.systemPrompt ?? ''),
  };
  const prompt = request.prompt;
  if (definition.promptVia === 'arg') checkValue('prompt', prompt);

  const resume = resumeArguments(definition, request.resumeSessionId);
  const resumeAt = resume.length === 0 ? -1 : resumePosition(definition);
  const args: string[] = [];
  let previousIsLiteralFlag = false;
  let promptPlaced = false;
  for (const [index, element] of definition.args.entries()) {
    if (index === resumeAt) {
      args.push(...resume);
      previousIsLiteralFlag = false;
    }
    // The prompt as one argv element, never rendered.
    if (element === promptElement && definition.promptVia === 'arg') {
      if (prompt.startsWith('-') && args.at(-1) !== '--') args.push('--');
      args.push(prompt);
      promptPlaced = true;
      previousIsLiteralFlag = false;
      continue;
    }
    const names = [...element.matchAll(placeholderPattern)].map((match) => match[1]!);
    if (names.length === 0) {
      args.push(element);
      previousIsLiteralFlag = element.startsWith('-') && element !== '--' && element !== '-';
      continue;
    }
    const rendered = element.replace(placeholderPattern, (_, name: string) => values[name] ?? '');
    const isWholePlaceholder = names.length === 1 && element === `{{${names[0]}}}`;
    // An optional value left empty: drop it, and its flag when it is the flag's value.
    if (names.every((name) => !values[name])) {
      if (isWholePlaceholder && previousIsLiteralFlag) args.pop();
      previousIsLiteralFlag = false;
      continue;
    }
    // A value that looks like a flag: joined to its long flag, refused after a short one.
    if (isWholePlaceholder && previousIsLiteralFlag && rendered.startsWith('-')) {
      const flag = args.at(-1)!;
      if (!flag.startsWith('--')) {
        throw new ValidationError([{ field: names[0]!, message: `The ${valueWords(names[0]!)} ${quote(rendered)} starts with \`-\` and would be read as a flag after \`${flag}\`` }]);
      }
      args[args.length - 1] = `${flag}=${rendered}`;
    } else {
      args.push(rendered);
    }
    previousIsLiteralFlag = false;
  }
  if (resumeAt === definition.args.length) args.push(...resume);

  if (definition.promptVia === 'arg') {
    if (!promptPlaced) throw new ValidationError([{ field: 'args', message: `The arguments need a \`${promptElement}\` line when the prompt goes in as an argument (promptVia 'arg'), not ${quote(definition.args)}` }]);
    return { command: definition.command, args };
  }
  return { command: definition.command, args, stdin: prompt };
}

/** The rendered `resume` arguments for a session id; none without an id or without `resume`. */
function resumeArguments(definition: Pick<HarnessDefinition, 'resume'>, sessionId: string | undefined): string[] {
  if (!sessionId || !definition.resume?.length) return [];
  checkValue('sessionId', sessionId);
  if (sessionId.startsWith('-')) throw new ValidationError([{ field: 'sessionId', message: `The session id ${quote(sessionId)} starts with \`-\` and would be read as a flag` }]);
  // One pass: the id is inserted once and never read as a template.
  return definition.resume.map((element) => element.split(sessionIdElement).join(sessionId));
}

/** The index in args before which the resume arguments go (args.length: at the end). */
function resumePosition(definition: Pick<HarnessDefinition, 'args' | 'promptVia'>): number {
  const { args } = definition;
  if (definition.promptVia === 'arg') {
    const prompt = args.indexOf(promptElement);
    if (prompt >= 0) return prompt > 0 && args[prompt - 1] === '--' ? prompt - 1 : prompt;
  }
  return args.at(-1) === '-' ? args.length - 1 : args.length;
}

/** `systemPrompt` → "system prompt": a value as a message names it. */
function valueWords(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`);
}

function checkValue(field: string, value: string): string {
  if (typeof value !== 'string') throw new ValidationError([{ field, message: `The ${valueWords(field)} must be text, not ${quote(value)}` }]);
  if (value.includes('\0')) throw new ValidationError([{ field, message: `The ${valueWords(field)} holds a NUL character, which a command line cannot carry: ${quote(value)}` }]);
  return value;
}
