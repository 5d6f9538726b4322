// Templates: `{{ path }}` placeholders (DESIGN §4 "Templates" and "Shell safety").
//
// Two ways to fill a template:
// - `renderTemplate` puts the text of each value in place (agent prompts, approval messages).
// - `renderShellCommand` never puts a value into shell source. Each placeholder becomes a reference
//   to an environment variable that holds the value (`${FACTORY_T1}`, ...), quoted to suit where it
//   stands, so the shell expands it as one word of data and never parses it. The rule GitHub
//   documents for `${{ }}` in Actions, applied for the user.
//
// Why the shell rewrite is safe even where the scanner misjudges unusual syntax (`case` patterns
// inside `$( )`, quotes inside `${x#...}`): a value only ever reaches the shell through parameter
// expansion, and the result of an expansion is not parsed again. A wrong guess about the quoting can
// at worst split or glob the value, or show it literally; it cannot run it. The exception is
// arithmetic (`$(( ))`), where bash evaluates the value as an expression, and `$(…)` inside an
// array subscript in it runs; `placeholdersInSingleQuotes` reports those.

import type { Issue } from './api';

/** One `{{ path }}` in a template: the trimmed path and where the placeholder stands. */
export interface Placeholder {
  path: string;
  start: number;
  end: number;
}

/** Everything a template can refer to. */
export interface TemplateContext {
  /** `issue.<field>`; `issue.raw.<a.b.c>` walks into `raw`. */
  issue?: Issue;
  vars: Record<string, string>;
  /** Results of earlier steps; `selected` holds the LABELS of the chosen options. */
  steps: Record<string, { output?: string; selected?: string[]; comment?: string }>;
  run: { id: string; url?: string };
  project: { name: string; path: string };
  workspace: string;
}

const placeholderPattern = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Every placeholder of `template`, in order. */
export function listPlaceholders(template: string): Placeholder[] {
  const found: Placeholder[] = [];
  for (const match of template.matchAll(placeholderPattern)) {
    found.push({ path: match[1]!, start: match.index!, end: match.index! + match[0].length });
  }
  return found;
}

// ───────────────────────────── Paths and values ─────────────────────────────

const issueFields = ['title', 'key', 'description', 'url', 'labels', 'priority', 'source'] as const;
const stepFields = ['output', 'selected', 'comment'] as const;
const arraySeparator = ', ';

/**
 * Whether `path` names something a template may refer to: `issue.<field>`, `issue.raw`,
 * `issue.raw.<a.b.c>`, `vars.<name>`, `steps.<id>.output|selected|comment`, `run.id`, `run.url`,
 * `project.name`, `project.path`, `workspace`. Only the shape is checked, not whether the issue,
 * variable or step exists (a pipeline validator checks step order itself).
 */
export function isKnownPlaceholderRoot(path: string): boolean {
  const parts = path.split('.');
  if (parts.some((part) => part === '')) return false;
  const [root, second] = parts;
  switch (root) {
    case 'issue':
      if (second === 'raw') return true;
      return parts.length === 2 && (issueFields as readonly string[]).includes(second!);
    case 'vars':
      return parts.length === 2;
    case 'steps':
      return parts.length === 3 && (stepFields as readonly string[]).includes(parts[2]!);
    case 'run':
      return parts.length === 2 && (second === 'id' || second === 'url');
    case 'project':
      return parts.length === 2 && (second === 'name' || second === 'path');
    case 'workspace':
      return parts.length === 1;
    default:
      return false;
  }
}

/**
 * The text `path` stands for in `context`. Never throws: an unknown path, a missing issue, variable
 * or step, `undefined` and `null` all give `''`. Only own properties are read, so
 * `issue.raw.__proto__` or `vars.constructor` cannot reach an object's prototype. Values become
 * text as follows: strings as they are; numbers and booleans as `String(value)`; arrays as their
 * items joined by `", "` (an item that is an object or array as JSON); other objects as JSON.
 * The result is the value itself, never rendered again.
 */
export function resolvePlaceholder(path: string, context: TemplateContext): string {
  if (!isKnownPlaceholderRoot(path)) return '';
  const [root, second, ...rest] = path.split('.');
  switch (root) {
    case 'issue': {
      const issue = context.issue;
      if (!issue) return '';
      if (second === 'raw') return formatValue(walkOwnPath(issue.raw, rest));
      return formatValue(ownValue(issue, second!));
    }
    case 'vars':
      return formatValue(ownValue(context.vars, second!));
    case 'steps': {
      const step = ownValue(context.steps, second!);
      return formatValue(ownValue(step, rest[0]!));
    }
    case 'run':
      return formatValue(ownValue(context.run, second!));
    case 'project':
      return formatValue(ownValue(context.project, second!));
    default:
      return formatValue(context.workspace);
  }
}

/** `container[key]` when it is an own property of an object, else undefined. */
function ownValue(container: unknown, key: string): unknown {
  if (typeof container !== 'object' || container === null) return undefined;
  if (!Object.hasOwn(container, key)) return undefined;
  return (container as Record<string, unknown>)[key];
}

/** Follows `keys` into nested objects and arrays (arrays by index only), own properties only. */
function walkOwnPath(start: unknown, keys: string[]): unknown {
  let value = start;
  for (const key of keys) {
    if (Array.isArray(value) && !/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
    value = ownValue(value, key);
    if (value === undefined) return undefined;
  }
  return value;
}

function formatValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(formatItem).join(arraySeparator);
  return formatItem(value);
}

function formatItem(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      if (value === null) return '';
      try {
        return JSON.stringify(value) ?? '';
      } catch {
        return ''; // a cycle: cannot come from JSON, so not worth more than empty
      }
    default:
      return '';
  }
}

/**
 * `template` with each placeholder replaced by `resolvePlaceholder(path, context)`. Replacement is
 * one pass over the original text: a value that contains `{{x}}` is inserted as it is.
 * Not for shell commands: use `renderShellCommand`.
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  let output = '';
  let cursor = 0;
  for (const placeholder of listPlaceholders(template)) {
    output += template.slice(cursor, placeholder.start) + resolvePlaceholder(placeholder.path, context);
    cursor = placeholder.end;
  }
  return output + template.slice(cursor);
}

// ───────────────────────────── Environment ─────────────────────────────

/** Environment values cannot hold NUL (the C strings of `execve` end there): it is removed. */
function environmentValue(text: string): string {
  return text.replace(/\0/g, '');
}

/** `name` upper-cased with every character outside `[A-Z0-9_]` replaced by `_`. */
function environmentName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

/**
 * The context under readable names, for every step's process:
 * - with an issue: `FACTORY_ISSUE_TITLE`, `_KEY`, `_DESCRIPTION`, `_URL`, `_LABELS` (joined by
 *   `", "`), `_PRIORITY`, `_SOURCE` (empty when the field is missing);
 * - `FACTORY_RUN_ID`, `FACTORY_RUN_URL` (only when the run has a URL), `FACTORY_PROJECT_NAME`,
 *   `FACTORY_PROJECT_PATH`, `FACTORY_WORKSPACE`;
 * - `FACTORY_VAR_<NAME>` per variable (name upper-cased, characters outside `[A-Z0-9_]` as `_`;
 *   two names that map to one variable: the later one wins);
 * - `FACTORY_STEP_<ID>_OUTPUT`, `_SELECTED` (labels joined by `", "`), `_COMMENT`, for each field
 *   a step has (id upper-cased, `-` as `_`).
 * NUL characters are removed from every value, since an environment cannot carry them.
 */
export function stepEnvironment(context: TemplateContext): Record<string, string> {
  const environment: Record<string, string> = {};
  const set = (name: string, value: unknown) => {
    environment[name] = environmentValue(formatValue(value));
  };
  if (context.issue) {
    for (const field of issueFields) set(`FACTORY_ISSUE_${field.toUpperCase()}`, ownValue(context.issue, field));
  }
  set('FACTORY_RUN_ID', context.run.id);
  if (context.run.url !== undefined) set('FACTORY_RUN_URL', context.run.url);
  set('FACTORY_PROJECT_NAME', context.project.name);
  set('FACTORY_PROJECT_PATH', context.project.path);
  set('FACTORY_WORKSPACE', context.workspace);
  for (const [name, value] of Object.entries(context.vars)) set(`FACTORY_VAR_${environmentName(name)}`, value);
  for (const [id, step] of Object.entries(context.steps)) {
    for (const field of stepFields) {
      if (step[field] !== undefined) set(`FACTORY_STEP_${environmentName(id)}_${field.toUpperCase()}`, step[field]);
    }
  }
  return environment;
}

// ───────────────────────────── Shell commands ─────────────────────────────

/**
 * How the shell treats the spot where a placeholder stands:
 * unquoted; in double quotes (or `${x:-…}` inside them); in single quotes; in `$'…'`; in the body of
 * an unquoted here-document; in a quoted here-document (nothing expands); in arithmetic `$(( ))`.
 */
type Quoting = 'unquoted' | 'double' | 'single' | 'ansi' | 'heredoc' | 'quotedHeredoc' | 'arithmetic';

/** A placeholder and its quoting; `before` is an active `\` or `$` right before it in the command. */
interface ShellPlaceholder extends Placeholder {
  quoting: Quoting;
  before: 'backslash' | 'dollar' | null;
}

type Frame =
  | { kind: 'code'; closer: ')' | '`' | null; depth: number }
  | { kind: 'double' }
  | { kind: 'single' }
  | { kind: 'ansi' }
  | { kind: 'parameter'; inDouble: boolean; depth: number }
  | { kind: 'arithmetic'; depth: number }
  | { kind: 'heredoc'; delimiter: string; stripTabs: boolean; quoted: boolean };

type HeredocFrame = Extract<Frame, { kind: 'heredoc' }>;

const wordStartAfter = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>', '`']);
const wordEnd = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

/**
 * The placeholders of `command` with the POSIX shell quoting state each stands in, found by one scan
 * that follows quotes, backslash escapes, `$'…'`, `$( )`, backticks (a fresh quoting context
 * inside), `${ }`, `$(( ))`, comments and here-documents (`<<`, `<<-`, quoted or not).
 * Not modelled: `case` patterns inside `$( )` (their `)` ends the substitution early) and the
 * finer rules of quotes inside `${x#…}`; see the file comment for why a misjudgement stays harmless.
 * Placeholders inside comments are left out (they stay as text the shell ignores).
 */
function scanShellPlaceholders(command: string): ShellPlaceholder[] {
  const starts = new Map(listPlaceholders(command).map((placeholder) => [placeholder.start, placeholder]));
  const found: ShellPlaceholder[] = [];
  const stack: Frame[] = [{ kind: 'code', closer: null, depth: 0 }];
  const pendingHeredocs: HeredocFrame[] = [];
  let before: ShellPlaceholder['before'] = null;
  let index = 0;

  // `$` opens an expansion unless a placeholder follows it (then it is an ordinary `$`).
  const openDollar = (inDouble: boolean): void => {
    const next = command[index + 1];
    if (starts.has(index + 1)) {
      before = 'dollar';
      index += 1;
    } else if (next === '(' && command[index + 2] === '(' && !starts.has(index + 2)) {
      stack.push({ kind: 'arithmetic', depth: 0 });
      index += 3;
    } else if (next === '(') {
      stack.push({ kind: 'code', closer: ')', depth: 0 });
      index += 2;
    } else if (next === '{') {
      stack.push({ kind: 'parameter', inDouble, depth: 0 });
      index += 2;
    } else if (next === "'" && !inDouble) {
      stack.push({ kind: 'ansi' });
      index += 2;
    } else {
      index += 1;
    }
  };
  // `\` escapes the next character; before a placeholder it is remembered instead.
  const escape = (): void => {
    if (starts.has(index + 1)) {
      before = 'backslash';
      index += 1;
    } else {
      index += 2;
    }
  };

  while (index < command.length) {
    const frame = stack[stack.length - 1]!;

    // A here-document body ends at a line that is exactly its delimiter.
    if (frame.kind === 'heredoc' && (index === 0 || command[index - 1] === '\n')) {
      const newline = command.indexOf('\n', index);
      const lineEnd = newline === -1 ? command.length : newline;
      let line = command.slice(index, lineEnd);
      if (frame.stripTabs) line = line.replace(/^\t+/, '');
      if (line === frame.delimiter) {
        stack.pop();
        index = lineEnd + 1;
        const next = pendingHeredocs.shift();
        if (next && index < command.length) stack.push(next);
        continue;
      }
    }

    const placeholder = starts.get(index);
    if (placeholder) {
      found.push({ ...placeholder, quoting: quotingOf(frame), before });
      before = null;
      index = placeholder.end;
      continue;
    }
    before = null;

    const character = command[index]!;
    switch (frame.kind) {
      case 'single':
        if (character === "'") stack.pop();
        index += 1;
        break;

      case 'ansi':
        if (character === '\\') escape();
        else {
          if (character === "'") stack.pop();
          index += 1;
        }
        break;

      case 'double':
        if (character === '\\') escape();
        else if (character === '$') openDollar(true);
        else {
          if (character === '"') stack.pop();
          else if (character === '`') stack.push({ kind: 'code', closer: '`', depth: 0 });
          index += 1;
        }
        break;

      case 'heredoc':
        if (frame.quoted) index += 1;
        else if (character === '\\') escape();
        else if (character === '$') openDollar(true);
        else {
          if (character === '`') stack.push({ kind: 'code', closer: '`', depth: 0 });
          index += 1;
        }
        break;

      case 'parameter':
        if (character === '\\') escape();
        else if (character === '$') openDollar(frame.inDouble);
        else {
          if (character === '}') {
            if (frame.depth > 0) frame.depth -= 1;
            else stack.pop();
          } else if (character === '{') frame.depth += 1;
          else if (character === '"') stack.push({ kind: 'double' });
          else if (character === "'" && !frame.inDouble) stack.push({ kind: 'single' });
          else if (character === '`') stack.push({ kind: 'code', closer: '`', depth: 0 });
          index += 1;
        }
        break;

      case 'arithmetic':
        if (character === '\\') escape();
        else if (character === '$') openDollar(false);
        else if (character === ')' && frame.depth === 0) {
          stack.pop();
          index += command[index + 1] === ')' ? 2 : 1;
        } else {
          if (character === '(') frame.depth += 1;
          else if (character === ')') frame.depth -= 1;
          else if (character === '"') stack.push({ kind: 'double' });
          else if (character === '`') stack.push({ kind: 'code', closer: '`', depth: 0 });
          index += 1;
        }
        break;

      case 'code':
        if (character === '\\') escape();
        else if (character === '$') openDollar(false);
        else if (character === '#' && (index === 0 || wordStartAfter.has(command[index - 1]!))) {
          const newline = command.indexOf('\n', index);
          index = newline === -1 ? command.length : newline;
        } else if (character === '<' && command.startsWith('<<', index)) {
          if (command[index + 2] === '<') index += 3; // a bash here-string, not a here-document
          else index = readHeredocOperator(command, index, starts, pendingHeredocs);
        } else {
          if (character === "'") stack.push({ kind: 'single' });
          else if (character === '"') stack.push({ kind: 'double' });
          else if (character === '`') {
            if (frame.closer === '`') stack.pop();
            else stack.push({ kind: 'code', closer: '`', depth: 0 });
          } else if (character === '(') frame.depth += 1;
          else if (character === ')') {
            if (frame.depth > 0) frame.depth -= 1;
            else if (frame.closer === ')') stack.pop();
          } else if (character === '\n') {
            const next = pendingHeredocs.shift();
            if (next) stack.push(next);
          }
          index += 1;
        }
        break;
    }
  }
  return found;
}

/**
 * Reads `<<[-]word` starting at `index` and queues its here-document (the body starts after the
 * next unquoted newline). Any quoting in the word makes the body literal. Returns the index after
 * the word. A word that is empty or starts with a placeholder queues nothing.
 */
function readHeredocOperator(command: string, index: number, starts: Map<number, Placeholder>, pending: HeredocFrame[]): number {
  let cursor = index + 2;
  const stripTabs = command[cursor] === '-';
  if (stripTabs) cursor += 1;
  while (command[cursor] === ' ' || command[cursor] === '\t') cursor += 1;
  let delimiter = '';
  let quoted = false;
  while (cursor < command.length && !wordEnd.has(command[cursor]!) && !starts.has(cursor)) {
    const character = command[cursor]!;
    if (character === "'" || character === '"') {
      quoted = true;
      const close = command.indexOf(character, cursor + 1);
      const end = close === -1 ? command.length : close;
      delimiter += command.slice(cursor + 1, end);
      cursor = end + 1;
    } else if (character === '\\') {
      quoted = true;
      delimiter += command[cursor + 1] ?? '';
      cursor += 2;
    } else {
      delimiter += character;
      cursor += 1;
    }
  }
  if (delimiter !== '') pending.push({ kind: 'heredoc', delimiter, stripTabs, quoted });
  return cursor;
}

function quotingOf(frame: Frame): Quoting {
  switch (frame.kind) {
    case 'code':
      return 'unquoted';
    case 'parameter':
      return frame.inDouble ? 'double' : 'unquoted';
    case 'heredoc':
      return frame.quoted ? 'quotedHeredoc' : 'heredoc';
    default:
      return frame.kind;
  }
}

/** The text that expands variable `name` as exactly one word of data where `quoting` holds. */
function variableReference(name: string, quoting: Quoting): string {
  switch (quoting) {
    case 'unquoted':
      return `"\${${name}}"`; // quoted: no word splitting, no globbing
    case 'single':
      return `'"\${${name}}"'`; // close the single quote, expand in double quotes, reopen
    case 'ansi':
      return `'"\${${name}}"$'`;
    default:
      return `\${${name}}`; // double quotes, here-documents (quotes would be literal), arithmetic
  }
}

/**
 * `command` with no value in its source: each placeholder is replaced by a reference to an
 * environment variable `FACTORY_T1`, `FACTORY_T2`, … (one per distinct path) quoted to fit where it
 * stands: `"${FACTORY_T1}"` unquoted, `${FACTORY_T1}` inside double quotes and unquoted
 * here-documents, `'"${FACTORY_T1}"'` inside single quotes (so it still expands). Inside a quoted
 * here-document nothing expands, so `${FACTORY_T1}` stays literal there (`placeholdersInSingleQuotes`
 * reports it). A `\` or `$` written right before a placeholder keeps the meaning it has before
 * ordinary text. `env` holds the FACTORY_T* values and `stepEnvironment(context)`; NUL characters
 * are removed from values. Run the result with a POSIX shell (`sh -c`) and this environment.
 */
export function renderShellCommand(command: string, context: TemplateContext): { command: string; env: Record<string, string> } {
  const env = stepEnvironment(context);
  const variableByPath = new Map<string, string>();
  let output = '';
  let cursor = 0;
  for (const placeholder of scanShellPlaceholders(command)) {
    let name = variableByPath.get(placeholder.path);
    if (name === undefined) {
      name = `FACTORY_T${variableByPath.size + 1}`;
      variableByPath.set(placeholder.path, name);
      env[name] = environmentValue(resolvePlaceholder(placeholder.path, context));
    }
    let text = command.slice(cursor, placeholder.start);
    if (placeholder.before === 'dollar') text = text.slice(0, -1) + '\\$';
    if (placeholder.before === 'backslash') {
      // Unquoted, `\{` means `{`: the backslash goes. Elsewhere it is a literal backslash: keep it.
      const keep = placeholder.quoting !== 'unquoted' && placeholder.quoting !== 'arithmetic';
      text = text.slice(0, -1) + (keep ? '\\\\' : '');
    }
    output += text + variableReference(name, placeholder.quoting);
    cursor = placeholder.end;
  }
  return { command: output + command.slice(cursor), env };
}

/**
 * Paths of the placeholders in `command` that deserve a validation warning, each once, in order:
 * placeholders that the shell will not expand (in a quoted here-document) or that the user put in
 * single quotes (`'…'`, `$'…'`; they work, but look as if they would not), and placeholders in
 * arithmetic `$(( ))`, where bash evaluates the value as an expression (and can run commands in it).
 */
export function placeholdersInSingleQuotes(command: string): string[] {
  const flagged: Quoting[] = ['single', 'ansi', 'quotedHeredoc', 'arithmetic'];
  const paths = scanShellPlaceholders(command)
    .filter((placeholder) => flagged.includes(placeholder.quoting))
    .map((placeholder) => placeholder.path);
  return [...new Set(paths)];
}
