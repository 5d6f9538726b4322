// Placeholders in shell commands (DESIGN §4 "Shell safety"): `renderShellCommand` never puts a
// value into shell source. Each placeholder becomes a reference to an environment variable that
// holds the value (`${FACTORY_T1}`, ...), quoted to suit where it stands, so the shell expands it
// as one word of data and never parses it. The rule GitHub documents for `${{ }}` in Actions,
// applied for the user.
//
// Why the shell rewrite is safe even where the scanner misjudges unusual syntax (quotes inside
// `${x#...}`): a value only ever reaches the shell through parameter expansion, and the result of
// an expansion is not parsed again. A wrong guess about the quoting can at worst split or glob the
// value, or show it literally; it cannot run it. The exceptions are the places where bash
// evaluates the text of an expansion as code (arithmetic, array subscripts, variable names: a
// value `a[$(rm -rf ~)]` runs there) and commands that parse it again (`bash -c`, `eval`).
// `shellCommandProblems` refuses the first (saving fails) and warns about the second; rendering
// refuses the first too, for pipelines saved before the check. Both follow a placeholder into the
// shell variables that hold it (core/shell-flow.ts): `x="{{issue.title}}"; echo $((x))` is refused
// like `echo $(( {{issue.title}} ))`.

import { ValidationError } from './errors';
import { followShellValues, variablesThrough, type Origin, type ValueFlow } from './shell-flow';
import { scanShellCommand } from './shell-scan';
import type { CodePlace, Quoting, ShellPlaceholder } from './shell-syntax';
import { environmentName, environmentValue, isKnownPlaceholderRoot, listPlaceholders, resolvePlaceholder, stepEnvironment, type TemplateContext } from './template';

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
 * Throws ValidationError when a placeholder stands where the shell runs text as code, itself or
 * through a variable that holds it (a pipeline saved before that was refused): no quoting makes a
 * value safe there. `ownEnvironment` is the step's own environment as written (with placeholders).
 */
export function renderShellCommand(command: string, context: TemplateContext, ownEnvironment: Readonly<Record<string, string>> = {}): { command: string; env: Record<string, string> } {
  const placeholders = scanPlaceholders(command);
  const refused = shellCommandProblems(command, ownEnvironment).filter((problem) => problem.severity === 'error');
  if (refused.length > 0) throw new ValidationError(refused.map((problem) => ({ field: '', message: problem.message })));
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
function readableVariableName(path: string): string | undefined {
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
  '${!x}': 'use a fixed variable name',
  'declare -i': 'give it to a variable without -i and keep only its digits: v="{{x}}"; n="${v//[!0-9]/}"',
  'declare -a': 'put it in an array literal instead: declare -a list=("{{x}}")',
  'a prompt string': 'keep run text out of PS1–PS4 and PROMPT_COMMAND',
};

/** Where the placeholder stands, as the message names it. */
const codePlacePhrases: Record<CodePlace, string> = {
  '$(( ))': 'inside $(( ))', '$[ ]': 'inside $[ ]', '(( ))': 'inside (( ))', 'let': 'in the arguments of let',
  '[[ -eq ]]': 'in a number comparison of [[ ]] ([[ -eq ]], -lt, -gt, …)',
  'an array subscript': 'inside an array subscript a[…]', '${x:offset}': 'in the offset or length of ${x:offset}',
  'a variable name': 'as a variable name (of read, printf -v, declare, unset or a -v test)',
  '${!x}': 'in an indirection ${!…}, whose value names the variable to read',
  'declare -i': 'in the value of an integer variable (declare -i), which is arithmetic',
  'declare -a': 'in the value of declare -a or -A, where (…) is an array literal with subscripts',
  'a prompt string': 'in a prompt string (PS1–PS4, PROMPT_COMMAND), which the shell expands when it prints it',
};

/** How a variable is read at each code place, as messages say it. */
const readAs: Record<CodePlace, string> = {
  '$(( ))': 'is read as arithmetic in', '$[ ]': 'is read as arithmetic in', '(( ))': 'is read as arithmetic in', 'let': 'is read as arithmetic in',
  '[[ -eq ]]': 'is compared as a number (arithmetic) in', 'an array subscript': 'is read as an array subscript (arithmetic) in',
  '${x:offset}': 'is read as an offset (arithmetic) in', 'a variable name': 'is read as a variable name in',
  '${!x}': 'names the variable to read in', 'declare -i': 'is given to an integer variable (arithmetic) in',
  'declare -a': 'is given to declare -a/-A, which reads (…) as an array literal, in', 'a prompt string': 'is given to a prompt string, which the shell expands, in',
};

/** What to do instead when a variable carries a value to `place`. */
function variableAdvice(place: CodePlace, variable: string): string {
  switch (place) {
    case 'a variable name':
    case '${!x}':
    case 'declare -a':
    case 'a prompt string':
      return codePlaceAdvice[place].replaceAll('{{x}}', `$${variable}`);
    default:
      return `check it is a number just before: case "$${variable}" in ""|*[!0-9]*) exit 1;; esac (or, in bash, keep only its digits: digits="\${${variable}//[!0-9]/}", then use $digits)`;
  }
}

/** "`y` holds `{{issue.title}}` (through `x`)": what a variable holds and where from. */
function holdsPhrase(origin: Origin): string {
  const names = variablesThrough(origin);
  const variable = names.pop()!;
  const value = origin.path !== undefined ? `\`{{${origin.path}}}\`` : 'text of the run';
  const from = origin.outside === undefined || origin.outside === variable ? '' : `\`${origin.outside}\``;
  const through = [from, ...names.filter((name) => name !== origin.outside).map((name) => `\`${name}\``)].filter(Boolean);
  const set = origin.outside === variable && origin.path === undefined ? ' (Factory sets it for every step)' : '';
  return `\`${variable}\` holds ${value}${set}${through.length > 0 ? ` (through ${through.join(', ')})` : ''}`;
}

function flowMessage(flow: ValueFlow): string {
  const scripts = flow.scripts.map((by) => ` in the script of \`${by}\``).join('');
  if (flow.origin.variable === undefined) {
    return `${codePlaceMessage(flow.origin.path!, flow.codePlace!).replace(', where', ` (\`${flow.text}\`${scripts}), where`)}`;
  }
  const variable = flow.origin.variable;
  if (flow.codePlace !== undefined) {
    return `${holdsPhrase(flow.origin)} and ${readAs[flow.codePlace]} \`${flow.text}\`${scripts}, where the shell runs text as code: ${variableAdvice(flow.codePlace, variable)}`;
  }
  return `${holdsPhrase(flow.origin)} and is parsed as code again by \`${flow.reparsedBy}\`${scripts}: a value such as $(rm -rf ~) would run; pass it as an argument instead (sh -c '… "$1" …' _ "$${variable}")`;
}

function codePlaceMessage(path: string, place: CodePlace): string {
  const written = `{{${path}}}`;
  return `\`${written}\` stands ${codePlacePhrases[place]}, where the shell runs text as code: ${codePlaceAdvice[place].replaceAll('{{x}}', written)}`;
}

/** A problem of one placeholder in a shell command: `error` refuses the pipeline, `warning` is shown. */
interface ShellCommandProblem {
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
export function shellCommandProblems(command: string, stepEnvironment: Readonly<Record<string, string>> = {}): ShellCommandProblem[] {
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
  // The step's own environment variables hold the values of the placeholders written in them.
  const outside = new Map<string, Origin>();
  for (const [name, value] of Object.entries(stepEnvironment)) {
    const first = listPlaceholders(value)[0];
    if (first !== undefined) outside.set(name, { path: first.path, outside: name, variable: name });
  }
  for (const flow of followShellValues(command, listPlaceholders(command), outside)) {
    report(flow.severity, flow.origin.path ?? flow.origin.outside ?? '', flowMessage(flow));
  }
  return problems;
}
