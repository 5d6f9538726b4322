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
// refuses the first too, for pipelines saved before the check.

import { ValidationError } from './errors';
import { scanShellCommand, type CodePlace, type Quoting, type ShellPlaceholder } from './shell-scan';
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
