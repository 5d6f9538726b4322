// Shell safety (DESIGN §4): places where the shell runs text as code refuse placeholders when a
// pipeline is saved; places where a value is parsed as code again (bash -c, eval, …) warn.
// The exploits run under a real bash, with the environment renderShellCommand gives a step.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError, type ValidationIssue } from '../../src/core/errors';
import { pipelineWarnings, validatePipeline, type PipelineContext } from '../../src/core/pipeline';
import { parsePipelineExport } from '../../src/core/pipeline-export';
import { renderShellCommand } from '../../src/core/shell-quoting';
import type { TemplateContext } from '../../src/core/template';

const projectId = 'prj_0123456789abcdef';
const context: PipelineContext = { projectIds: [projectId], harnessIds: ['claude'] };
const now = 1_700_000_000_000;
const bash = ['/bin/bash', '/usr/bin/bash'].find((path) => existsSync(path));

function pipelineWith(command: string): Record<string, unknown> {
  return { name: 'Hostile', projectId, variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell', command }] };
}

/** The issues validatePipeline refuses `command` with, or [] when it saves. */
function refusals(command: string): ValidationIssue[] {
  try {
    validatePipeline(pipelineWith(command), context, now);
    return [];
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
}

function warningsOf(command: string): ValidationIssue[] {
  return pipelineWarnings(validatePipeline(pipelineWith(command), context, now));
}

function templateContext(title: string): TemplateContext {
  return { issue: { title }, vars: {}, steps: {}, run: { id: 'run_1' }, project: { name: 'p', path: '/p' }, workspace: '/w' };
}

/**
 * Runs `command` with bash in an empty folder; true when it created a file there. `placeholder`
 * stands where Factory used to put `${FACTORY_T1}` (what renderShellCommand wrote in arithmetic),
 * with the title in the environment as a step gets it.
 */
function bashRunsTitle(command: string, title: string): boolean {
  return shellRunsTitle([bash!], command, title);
}

/** Runs `command` with `argv` (a shell and its options before -c) in an empty folder, as bashRunsTitle does. */
function shellRunsTitle(argv: readonly string[], command: string, title: string): boolean {
  const folder = mkdtempSync(join(tmpdir(), 'factory-shell-safety-'));
  try {
    const rendered = command.replaceAll('{{issue.title}}', '${FACTORY_T1}');
    const env = { ...renderShellCommand('true', templateContext(title)).env, FACTORY_T1: title, PATH: process.env.PATH ?? '/usr/bin:/bin' };
    // Standard input from /dev/null: on a socket (Node's default pipes) bash would read ~/.bashrc as if run by rshd.
    spawnSync(argv[0]!, [...argv.slice(1), '-c', rendered], { cwd: folder, env, encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
    return readdirSync(folder).length > 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const exploit = 'a[$(touch PWNED)]';

/** Places where bash evaluates the text of an expansion as code: each ran the exploit under bash 5. */
const codePlaces: Array<[command: string, place: string]> = [
  ['echo $(( {{issue.title}} + 1 ))', '$(( ))'],
  ['echo "$(( {{issue.title}} ))"', '$(( ))'],
  ['echo $(( "{{issue.title}}" ))', '$(( ))'],
  ['echo $[ {{issue.title}} ]', '$[ ]'],
  ['echo "$[ {{issue.title}} ]"', '$[ ]'],
  ['(( {{issue.title}} > 3 )) && echo big', '(( ))'],
  ['if (( "{{issue.title}}" )); then echo yes; fi', '(( ))'],
  ['for (( i = 0; i < {{issue.title}}; i++ )); do :; done', '(( ))'],
  ['a[{{issue.title}}]=1', 'an array subscript'],
  ['a["{{issue.title}}"]=1', 'an array subscript'],
  ['a[ {{issue.title}} ]=1', 'an array subscript'],
  ['declare -a x; x+=( [{{issue.title}}]=1 )', 'an array subscript'],
  ['x=( [ "{{issue.title}}" ]=1 )', 'an array subscript'],
  ['a=(1 2); echo "${a[{{issue.title}}]}"', 'an array subscript'],
  ['x=abc; echo "${x:{{issue.title}}}"', '${x:offset}'],
  ['x=abc; echo "${x:0:{{issue.title}}}"', '${x:offset}'],
  ['[[ "{{issue.title}}" -eq 1 ]]', '[[ -eq ]]'],
  ['[[ 1 -lt {{issue.title}} ]] || echo no', '[[ -eq ]]'],
  ['[[ -v "{{issue.title}}" ]]', 'a variable name'],
  ['test -v "{{issue.title}}"', 'a variable name'],
  ['let "{{issue.title}}"', 'let'],
  ['read -r "{{issue.title}}" <<< x', 'a variable name'],
  ['printf -v "{{issue.title}}" x', 'a variable name'],
  ['declare "{{issue.title}}=1"', 'a variable name'],
  ['declare -i n="{{issue.title}}"', 'declare -i'],
  ['f() { local "{{issue.title}}=1"; }; f', 'a variable name'],
  ['echo "$(( $(echo "{{issue.title}}") ))"', '$(( ))'],
  ['cat <<EOF\n$(( {{issue.title}} ))\nEOF', '$(( ))'],
];

const refuse = suite('shell safety: places where the shell runs text as code');

refuse('under bash, a webhook value in each of these places runs a command', () => {
  if (!bash) return;
  for (const [command] of codePlaces) assert.ok(bashRunsTitle(command, exploit), `bash did not run the value in ${JSON.stringify(command)}`);
  assert.not.ok(bashRunsTitle('echo "{{issue.title}}"', exploit), 'the control case ran');
});

refuse('saving refuses a placeholder in each of them, naming the step, the placeholder and the place', () => {
  for (const [command, place] of codePlaces) {
    const issues = refusals(command);
    assert.is(issues.length, 1, `${JSON.stringify(command)}: ${JSON.stringify(issues)}`);
    assert.is(issues[0]!.field, 'steps.build.command');
    assert.ok(issues[0]!.message.includes('`{{issue.title}}`'), issues[0]!.message);
    assert.ok(issues[0]!.message.includes(place), `${JSON.stringify(command)}: ${issues[0]!.message}`);
    assert.ok(issues[0]!.message.includes('runs text as code') || issues[0]!.message.includes('as code'), issues[0]!.message);
  }
  const error = (() => {
    try {
      validatePipeline(pipelineWith('echo $(( {{issue.title}} + 1 ))'), context, now);
    } catch (caught) {
      return caught as ValidationError;
    }
    return undefined;
  })();
  assert.match(error!.message, 'Step 1: the command has `{{issue.title}}`, which stands inside $(( )), where the shell runs text as code: move it out (compare in a [ ] test instead');
});

refuse('an import and a template are refused the same way', () => {
  const exported = JSON.stringify({ servicePipeline: 1, name: 'x', variables: {}, steps: [{ id: 'count', name: 'Count', kind: 'shell', command: 'echo $(( {{vars.n}} * 2 ))' }] });
  try {
    parsePipelineExport(exported);
    assert.unreachable('the import was accepted');
  } catch (error) {
    assert.instance(error, ValidationError);
    assert.match((error as Error).message, 'Step 1: the command has `{{vars.n}}`, which stands inside $(( ))');
  }
});

refuse('a run of a pipeline stored before this check refuses to render the command', () => {
  assert.throws(() => renderShellCommand('echo $(( {{issue.title}} ))', templateContext(exploit)), /stands inside \$\(\( \)\)/);
});

refuse('the same placeholders in safe places still save', () => {
  const safe = [
    'echo "{{issue.title}}"',
    '[ "{{issue.title}}" -eq 1 ] || echo no',
    'test "{{issue.title}}" -gt 2',
    '[[ "{{issue.title}}" == 1 ]]',
    'n="{{issue.title}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac; echo $(( n + 1 ))',
    'echo a[{{issue.title}}]',
    'echo "a[{{issue.title}}]"',
    'declare -A m; m[key]="{{issue.title}}"',
    'x="${y:-{{issue.title}}}"',
    'read -r line <<< "{{issue.title}}"',
    'read -r -p "{{issue.title}}" answer',
    'printf "%s\\n" "{{issue.title}}"',
    'echo "$(case "{{issue.title}}" in a) echo one;; *) echo other;; esac)" && echo $(( 1 + 2 ))',
    'cat <<EOF\n(( {{issue.title}} ))\n$[ is text\nEOF',
    'echo "(( {{issue.title}} ))" \'$(( 1 ))\'',
    'echo $(( 1 + 2 )) "{{issue.title}}" # $(( {{issue.title}} ))',
  ];
  for (const command of safe) assert.equal(refusals(command), [], command);
});

/** Places where the value is parsed as shell code again by another command: warnings. */
const reparsed: Array<[command: string, by: string]> = [
  ['sh -c "echo {{issue.title}}"', 'sh -c'],
  ['bash -lc "echo {{issue.title}}"', 'bash -c'],
  ['timeout 5 sh -c "echo {{issue.title}}"', 'sh -c'],
  ['eval "echo {{issue.title}}"', 'eval'],
  ['trap "echo {{issue.title}}" EXIT', 'trap'],
  ['echo "echo {{issue.title}}" | sh', 'sh'],
  ['bash <<EOF\necho {{issue.title}}\nEOF', 'bash'],
  ['sh <<< "echo {{issue.title}}"', 'sh'],
];

const warn = suite('shell safety: places where the value is parsed as code again');

warn('under bash, a value there runs a command', () => {
  if (!bash) return;
  for (const [command] of reparsed) {
    const { command: rendered, env } = renderShellCommand(command, templateContext('$(touch PWNED)'));
    const folder = mkdtempSync(join(tmpdir(), 'factory-shell-safety-'));
    try {
      spawnSync(bash, ['-c', rendered], { cwd: folder, env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeout: 10_000 });
      assert.ok(readdirSync(folder).length > 0, `nothing ran in ${JSON.stringify(command)}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
});

warn('saving warns about each, naming the placeholder and what parses it', () => {
  for (const [command, by] of reparsed) {
    const found = warningsOf(command);
    assert.is(found.length, 1, `${JSON.stringify(command)}: ${JSON.stringify(found)}`);
    assert.is(found[0]!.field, 'steps.build.command');
    assert.ok(found[0]!.message.includes('`{{issue.title}}`') && found[0]!.message.includes(`\`${by}\``), `${JSON.stringify(command)}: ${found[0]!.message}`);
    assert.ok(found[0]!.message.includes('$FACTORY_ISSUE_TITLE'), found[0]!.message);
  }
});

warn('passing the value as an argument or through a quoted here-document is not warned about', () => {
  for (const command of [
    'sh -c \'echo "$1"\' _ "{{issue.title}}"',
    'bash ./deploy.sh "{{issue.title}}"',
    'echo "{{issue.title}}" | grep -c x',
    'echo "sh -c {{issue.title}}"',
    'python3 script.py "{{issue.title}}"',
    'bash <<\'EOF\'\necho "{{issue.title}}"\nEOF',
  ]) assert.equal(warningsOf(command), [], command);
});

warn('single quotes and quoted here-documents keep their own warnings', () => {
  const quoted = warningsOf(`echo '{{issue.title}}'`);
  assert.is(quoted.length, 1);
  assert.match(quoted[0]!.message, 'single quotes');
  const heredoc = warningsOf(`cat <<'EOF'\n{{issue.title}}\nEOF`);
  assert.is(heredoc.length, 1);
  assert.match(heredoc[0]!.message, 'quoted here-document');
});

// ───────────────────────────── Values carried by variables ─────────────────────────────

const dash = ['/bin/dash', '/usr/bin/dash'].find((path) => existsSync(path));
const arithmetic = 'a[$(touch PWNED)]';

interface CarriedCase {
  command: string;
  /** The shells that ran the exploit: bash, dash, bash as sh. */
  shells: Array<'bash' | 'dash' | 'posix'>;
  title: string;
  severity: 'error' | 'warning';
  /** Words the message must hold: the variable, the code place's text, what parses it. */
  says: string[];
}

/** Each ran the title as code under a real shell before Factory followed variables; each now saves with an error or a warning. */
const carried: CarriedCase[] = [
  { command: 'x="{{issue.title}}"; echo $((x))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds `{{issue.title}}`', 'read as arithmetic in `$((x))`'] },
  { command: 'x="{{issue.title}}"; [[ $x -gt 0 ]]', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds', 'number', '`[[ $x -gt 0 ]]`'] },
  { command: 'declare -i n; n="{{issue.title}}"', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`{{issue.title}}`', 'integer variable (declare -i)', '`n="{{issue.title}}"`'] },
  { command: 'ref="{{issue.title}}"; echo ${!ref}', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`ref`, which holds', 'names the variable to read in `${!ref}`'] },
  { command: 'declare -a arr="{{issue.title}}"', shells: ['bash'], title: '([$(touch PWNED)]=1)', severity: 'error', says: ['`{{issue.title}}`', 'declare -a'] },
  { command: 'PS4="{{issue.title}}"; set -x; true', shells: ['bash'], title: '$(touch PWNED)', severity: 'error', says: ['`{{issue.title}}`', 'prompt string'] },
  { command: 'source <(echo "{{issue.title}}")', shells: ['bash'], title: 'touch PWNED', severity: 'warning', says: ['`{{issue.title}}`', '`source <(…)`'] },
  { command: '. /dev/stdin <<< "{{issue.title}}"', shells: ['bash'], title: 'touch PWNED', severity: 'warning', says: ['`{{issue.title}}`', '`. /dev/stdin`'] },
  { command: 'alias t="{{issue.title}}"\nt', shells: ['dash', 'posix'], title: 'touch PWNED', severity: 'warning', says: ['`{{issue.title}}`', '`alias`'] },
  { command: 'read x <<< "{{issue.title}}"; echo $((x))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds', '`$((x))`'] },
  { command: 'read -r x <<EOF\n{{issue.title}}\nEOF\necho $(( x ))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds', '`$(( x ))`'] },
  { command: 'printf -v x %s "{{issue.title}}"; y=$x; echo $(( y + 1 ))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`y`, which holds `{{issue.title}}` (through `x`)', '`$(( y + 1 ))`'] },
  { command: 'export PRIO="{{issue.title}}"; bash -c \'[[ $PRIO -gt 2 ]]\'', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`PRIO`, which holds', '`[[ $PRIO -gt 2 ]]` in the script of `bash -c`'] },
  { command: 'PRIO="{{issue.title}}" bash -c \'echo $(( PRIO ))\'', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`PRIO`, which holds', 'in the script of `bash -c`'] },
  { command: 'f() { local v="{{issue.title}}"; echo $(( v )); }; f', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`v`, which holds'] },
  { command: 'readonly r="{{issue.title}}"; (( r )) || true', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`r`, which holds', '`(( r ))`'] },
  { command: 'typeset t="{{issue.title}}"; let "t + 1"', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`t`, which holds', '`let "t + 1"`'] },
  { command: 'while read -r line; do echo $(( line )); done <<< "{{issue.title}}"', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`line`, which holds'] },
  { command: 'echo "{{issue.title}}" | while read -r n; do echo $(( n )); done', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`n`, which holds'] },
  { command: 'mapfile -t lines <<< "{{issue.title}}"; echo $(( lines ))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`lines`, which holds'] },
  { command: 'for x in "{{issue.title}}"; do (( x > 1 )) || true; done', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds'] },
  { command: 's=abc; x="{{issue.title}}"; echo "${s:x}"', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds', 'offset', '`${s:x}`'] },
  { command: 'x="{{issue.title}}"; a=(1 2); echo "${a[x]}"', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`x`, which holds', 'subscript', '`${a[x]}`'] },
  { command: 'x="{{issue.title}}"; PS4="$x"; set -x; true', shells: ['bash'], title: '$(touch PWNED)', severity: 'error', says: ['`x`, which holds', 'prompt string', '`PS4="$x"`'] },
  { command: 'x="{{issue.title}}"; declare -a arr="$x"', shells: ['bash'], title: '([$(touch PWNED)]=1)', severity: 'error', says: ['`x`, which holds', 'declare -a'] },
  { command: 'x="{{issue.title}}"; eval "$x"', shells: ['bash'], title: 'touch PWNED', severity: 'warning', says: ['`x`, which holds', '`eval`'] },
  { command: 'x="{{issue.title}}"; trap "$x" EXIT', shells: ['bash'], title: 'touch PWNED', severity: 'warning', says: ['`x`, which holds', '`trap`'] },
  { command: 'x="{{issue.title}}"; source <(echo "$x")', shells: ['bash'], title: 'touch PWNED', severity: 'warning', says: ['`x`, which holds', '`source <(…)`'] },
  { command: 'x="{{issue.title}}"; alias t="$x"\nt', shells: ['dash', 'posix'], title: 'touch PWNED', severity: 'warning', says: ['`x`, which holds', '`alias`'] },
  { command: 'echo $(( FACTORY_ISSUE_TITLE ))', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`FACTORY_ISSUE_TITLE`, which holds text of the run', '`$(( FACTORY_ISSUE_TITLE ))`'] },
  { command: 'bash -c \'[[ $FACTORY_ISSUE_TITLE -gt 2 ]]\'', shells: ['bash'], title: arithmetic, severity: 'error', says: ['`FACTORY_ISSUE_TITLE`', 'in the script of `bash -c`'] },
];

const argvOf: Record<CarriedCase['shells'][number], () => string[] | undefined> = {
  bash: () => (bash ? [bash] : undefined),
  dash: () => (dash ? [dash] : undefined),
  posix: () => (bash ? [bash, '--posix'] : undefined),
};

const flow = suite('shell safety: values that variables carry into code');

flow('under a real shell, a webhook value carried by each of these runs a command', () => {
  for (const { command, shells, title } of carried) {
    for (const shell of shells) {
      const argv = argvOf[shell]();
      if (argv) assert.ok(shellRunsTitle(argv, command, title), `${shell} did not run the value in ${JSON.stringify(command)}`);
    }
  }
});

flow('saving refuses the errors and warns about the rest, saying which variable carries which placeholder where', () => {
  for (const { command, severity, says } of carried) {
    const found = severity === 'error' ? refusals(command) : warningsOf(command);
    assert.ok(found.length >= 1, `${JSON.stringify(command)} saved without a ${severity}`);
    if (severity === 'warning') assert.equal(refusals(command), [], command);
    const message = found.map((issue) => issue.message).join('\n');
    assert.ok(found.every((issue) => issue.field === 'steps.build.command'), command);
    for (const words of says) assert.ok(message.includes(words), `${JSON.stringify(command)}: ${message} lacks ${words}`);
  }
});

flow('a run of a pipeline stored before this check refuses to render the errors', () => {
  for (const { command, severity } of carried) {
    if (severity === 'error') assert.throws(() => renderShellCommand(command, templateContext(arithmetic)), /where the shell runs text as code/, command);
    else renderShellCommand(command, templateContext(arithmetic));
  }
  assert.throws(() => renderShellCommand('echo $(( PRIO ))', templateContext(arithmetic), { PRIO: '{{issue.title}}' }), /`PRIO` holds `\{\{issue.title\}\}`/);
});

flow('a placeholder that names the variable to read is refused', () => {
  assert.match(refusals('echo ${!{{issue.title}}}')[0]!.message, 'in an indirection ${!…}');
});

/** Ordinary scripts that keep issue text in variables as data: they save without a word, and a hostile title runs nothing. */
const dataOnly = [
  'x="{{issue.title}}"; echo "$x"',
  'x="{{issue.title}}"; printf \'%s\\n\' "$x"',
  'x="{{issue.title}}"; [[ $x == foo ]] || echo no',
  'x="{{issue.title}}"; [[ -n $x ]] && echo set',
  'x="{{issue.title}}"; git --version >/dev/null && echo git commit -m "$x"',
  'x="{{issue.title}}"; [ "$x" -gt 3 ] 2>/dev/null || echo small',
  'x="{{issue.title}}"; len=${#x}; echo $(( len + 1 ))',
  'n="{{issue.title}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac; echo $(( n + 1 ))',
  'x="{{issue.title}}"; digits="${x//[!0-9]/}"; echo $(( digits + 1 ))',
  'x="{{issue.title}}"; x="${x//[^0-9]/}"; echo $(( x + 1 ))',
  'export X="{{issue.title}}"; sh -c \'echo "$X"\'',
  'X="{{issue.title}}"; bash -c \'echo $(( X + 1 ))\'',
  'title="{{issue.title}}"; branch="fix/${title// /-}"; echo "$branch"',
  'sh -c \'echo "$FACTORY_ISSUE_TITLE"\'; echo "${FACTORY_ISSUE_TITLE}"',
  'declare -a list=("{{issue.title}}"); echo "${list[0]}"',
  'x="{{issue.title}}"; declare -A m; m[key]="$x"; echo "${m[key]}"',
  'x="{{issue.title}}"; read -r first rest <<< "$x"; echo "$first"',
  'n=3; x="{{issue.title}}"; echo $(( n + 1 )) "$x"',
];

flow('variables that hold issue text as data stay allowed', () => {
  for (const command of dataOnly) {
    assert.equal(refusals(command), [], command);
    assert.equal(warningsOf(command), [], command);
    if (bash) assert.not.ok(shellRunsTitle([bash], command, arithmetic), `${JSON.stringify(command)} ran the title`);
  }
});

flow('a check written before an assignment that brings the value back does not count', () => {
  assert.is(refusals('n="{{issue.title}}"; case "$n" in *[!0-9]*) exit 1;; esac; n="{{issue.key}}"; echo $(( n ))').length, 1);
  assert.is(refusals('n=1; case "$n" in *[!0-9]*) exit 1;; esac; while :; do echo $(( n )); n="{{issue.title}}"; done').length, 1);
  assert.is(refusals('n="{{issue.title}}"; case "$n" in *[!0-9]*) echo odd;; esac; echo $(( n ))').length, 1, 'a check that does not exit');
});

refuse.run();
warn.run();
flow.run();
