// Templates: `{{ path }}` placeholders (DESIGN §4 "Templates" and "Shell safety").
//
// Two ways to fill a template:
// - `renderTemplate` puts the text of each value in place (agent prompts, approval messages).
// - `renderShellCommand` never puts a value into shell source. Each placeholder becomes a reference
//   to an environment variable that holds the value (`${FACTORY_T1}`, ...), quoted to suit where it
//   stands, so the shell expands it as one word of data and never parses it. The rule GitHub
//   documents for `${{ }}` in Actions, applied for the user.
//
// Why the shell rewrite is safe even where the scanner misjudges unusual syntax (quotes inside
// `${x#...}`): a value only ever reaches the shell through parameter expansion, and the result of
// an expansion is not parsed again. A wrong guess about the quoting can at worst split or glob the
// value, or show it literally; it cannot run it. The exceptions are the places where bash
// evaluates the text of an expansion as code (arithmetic, array subscripts, variable names: a
// value `a[$(rm -rf ~)]` runs there) and commands that parse it again (`bash -c`, `eval`).
// `shellCommandProblems` refuses the first (saving fails) and warns about the second; rendering
// refuses the first too, for pipelines saved before the check.

import type { Issue } from './api';
import { ValidationError } from './errors';
import { scanShellCommand, type CodePlace, type Quoting, type ShellPlaceholder } from './shell-scan';

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
      return `\${${name}}`; // double quotes and here-documents (quotes would be literal there)
  }
}

/** The placeholders of `command` with where they stand (see core/shell-scan.ts). */
function scanPlaceholders(command: string): ShellPlaceholder[] {
  return scanShellCommand(command, listPlaceholders(command));
}

/**
 * `command` with no value in its source: each placeholder is replaced by a reference to an
 * environment variable `FACTORY_T1`, `FACTORY_T2`, … (one per distinct path) quoted to fit where it
 * stands: `"${FACTORY_T1}"` unquoted, `${FACTORY_T1}` inside double quotes and unquoted
 * here-documents, `'"${FACTORY_T1}"'` inside single quotes (so it still expands). Inside a quoted
 * here-document nothing expands, so `${FACTORY_T1}` stays literal there (`shellCommandProblems`
 * warns about it). A `\` or `$` written right before a placeholder keeps the meaning it has before
 * ordinary text. `env` holds the FACTORY_T* values and `stepEnvironment(context)`; NUL characters
 * are removed from values. Run the result with a POSIX shell (`sh -c`) and this environment.
 * Throws ValidationError when a placeholder stands where the shell runs text as code (a pipeline
 * saved before that was refused): no quoting makes a value safe there.
 */
export function renderShellCommand(command: string, context: TemplateContext): { command: string; env: Record<string, string> } {
  const placeholders = scanPlaceholders(command);
  const refused = placeholders.filter((placeholder) => placeholder.codePlace !== undefined);
  if (refused.length > 0) throw new ValidationError(refused.map((placeholder) => ({ field: '', message: codePlaceMessage(placeholder.path, placeholder.codePlace!) })));
  const env = stepEnvironment(context);
  const variableByPath = new Map<string, string>();
  let output = '';
  let cursor = 0;
  for (const placeholder of placeholders) {
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
      const keep = placeholder.quoting !== 'unquoted';
      text = text.slice(0, -1) + (keep ? '\\\\' : '');
    }
    output += text + variableReference(name, placeholder.quoting);
    cursor = placeholder.end;
  }
  return { command: output + command.slice(cursor), env };
}

/** The readable environment variable that holds `path`'s value in every step, if there is one. */
export function readableVariableName(path: string): string | undefined {
  if (!isKnownPlaceholderRoot(path)) return undefined;
  const [root, second, third] = path.split('.');
  switch (root) {
    case 'issue':
      return second === 'raw' ? undefined : `FACTORY_ISSUE_${second!.toUpperCase()}`;
    case 'vars':
      return `FACTORY_VAR_${environmentName(second!)}`;
    case 'steps':
      return `FACTORY_STEP_${environmentName(second!)}_${third!.toUpperCase()}`;
    case 'workspace':
      return 'FACTORY_WORKSPACE';
    default:
      return `FACTORY_${root!.toUpperCase()}_${second!.toUpperCase()}`;
  }
}

/** What to do instead, per place where the shell runs text as code. */
const codePlaceAdvice: Record<CodePlace, string> = {
  '$(( ))': 'move it out (compare in a [ ] test instead: [ "{{x}}" -gt 3 ]; to compute with a number, copy it into a variable and check it first: n="{{x}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac)',
  '$[ ]': 'move it out (compare in a [ ] test instead: [ "{{x}}" -gt 3 ]; to compute with a number, copy it into a variable and check it first: n="{{x}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac)',
  '(( ))': 'move it out (compare in a [ ] test instead: [ "{{x}}" -gt 3 ])',
  '[[ -eq ]]': 'move it out (compare in a [ ] test instead: [ "{{x}}" -eq 3 ] does not evaluate the text)',
  'let': 'move it out (compare in a [ ] test instead: [ "{{x}}" -gt 3 ])',
  'an array subscript': 'move it out (use a fixed index, or an associative array declared with declare -A)',
  '${x:offset}': 'move it out (copy it into a variable and check it is a number first: n="{{x}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac)',
  'a variable name': 'use a fixed variable name',
};

/** Where the placeholder stands, as the message names it. */
const codePlacePhrases: Record<CodePlace, string> = {
  '$(( ))': 'inside $(( ))', '$[ ]': 'inside $[ ]', '(( ))': 'inside (( ))', 'let': 'in the arguments of let',
  '[[ -eq ]]': 'in a number comparison of [[ ]] ([[ -eq ]], -lt, -gt, …)',
  'an array subscript': 'inside an array subscript a[…]', '${x:offset}': 'in the offset or length of ${x:offset}',
  'a variable name': 'as a variable name (of read, printf -v, declare, unset or a -v test)',
};

function codePlaceMessage(path: string, place: CodePlace): string {
  const written = `{{${path}}}`;
  return `\`${written}\` stands ${codePlacePhrases[place]}, where the shell runs text as code: ${codePlaceAdvice[place].replaceAll('{{x}}', written)}`;
}

/** A problem of one placeholder in a shell command: `error` refuses the pipeline, `warning` is shown. */
export interface ShellCommandProblem {
  severity: 'error' | 'warning';
  path: string;
  message: string;
}

/**
 * What a pipeline check reports about the placeholders of a shell command, at most one problem
 * per path and kind, in order:
 * - errors: a placeholder where bash evaluates text as code (`$(( ))`, `$[ ]`, `(( ))`, `let`,
 *   number comparisons of `[[ ]]`, array subscripts, `${x:offset}`, variable names); a value such
 *   as `a[$(rm -rf ~)]` runs there however it is quoted;
 * - warnings: a placeholder whose value another command parses as code again (`sh -c`, `eval`,
 *   `trap`, a pipe, here-document or here-string into a shell, `python -c`, awk and sed programs,
 *   ssh); one in single quotes (it works, but looks as if it would not); one in a quoted
 *   here-document that no shell reads (it is not expanded).
 */
export function shellCommandProblems(command: string): ShellCommandProblem[] {
  const problems: ShellCommandProblem[] = [];
  const reported = new Set<string>();
  const report = (severity: ShellCommandProblem['severity'], path: string, message: string) => {
    const key = `${severity} ${path} ${message}`;
    if (reported.has(key)) return;
    reported.add(key);
    problems.push({ severity, path, message });
  };
  for (const placeholder of scanPlaceholders(command)) {
    const { path } = placeholder;
    const written = `\`{{${path}}}\``;
    if (placeholder.codePlace !== undefined) {
      report('error', path, codePlaceMessage(path, placeholder.codePlace));
    } else if (placeholder.reparsedBy !== undefined) {
      const readable = readableVariableName(path);
      const instead = readable === undefined
        ? 'pass it as an argument instead (sh -c \'… "$1" …\' _ "{{…}}")'
        : `pass it as an argument instead (sh -c '… "$1" …' _ "{{${path}}}") or use $${readable} inside`;
      report('warning', path, `${written} is parsed as code again by \`${placeholder.reparsedBy}\`: a value such as $(rm -rf ~) would run; ${instead}`);
    } else if (placeholder.quoting === 'single' || placeholder.quoting === 'ansi') {
      report('warning', path, `${written} stands inside single quotes, where it looks as if it stays text (it is filled in all the same); put it in double quotes instead: "{{${path}}}"`);
    } else if (placeholder.quoting === 'quotedHeredoc' && !placeholder.expandedByReader) {
      report('warning', path, `${written} stands in a quoted here-document (<<'EOF'), where nothing expands: the step would see the text \${FACTORY_T1} instead of the value; leave the delimiter unquoted (<<EOF)`);
    }
  }
  return problems;
}
