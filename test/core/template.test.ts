import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { TemplateContext } from '../../src/core/template';
import { renderShellCommand, shellCommandProblems } from '../../src/core/shell-quoting';
import { hostileShellUnits, repeatToLength } from '../helpers/hostile-shell-units';
import { isKnownPlaceholderRoot, listPlaceholders, renderTemplate, resolvePlaceholder, stepEnvironment } from '../../src/core/template';

function makeContext(overrides: Partial<TemplateContext> = {}): TemplateContext {
  return {
    issue: {
      title: 'Fix the login',
      key: 'ENG-7',
      description: 'It breaks',
      url: 'https://tracker.example/ENG-7',
      labels: ['bug', 'auth'],
      priority: 'high',
      source: 'webhook',
      raw: { team: { name: 'Core', size: 4, active: true, lead: null }, tags: ['a', 'b'], items: [{ id: 1 }, { id: 2 }] },
    },
    vars: { branch: 'main', 'release-name': 'r1' },
    steps: { plan: { output: 'the plan' }, 'pick-one': { selected: ['Small', 'Large'], comment: 'go' } },
    run: { id: 'run_1', url: 'http://localhost:1/runs/run_1' },
    project: { name: 'Demo', path: '/projects/demo' },
    workspace: '/work/run_1',
    ...overrides,
  };
}

/** Runs `command` with `shell -c` in a fresh folder holding decoy files for globs to match. */
function runInShell(shell: string, command: string, env: Record<string, string>): { stdout: string; pwned: boolean; status: number | null } {
  const folder = mkdtempSync(join(tmpdir(), 'factory-template-'));
  try {
    writeFileSync(join(folder, 'decoy'), '');
    writeFileSync(join(folder, 'q'), '');
    const result = spawnSync(shell, ['-c', command], { cwd: folder, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' });
    if (result.error) throw result.error;
    return { stdout: result.stdout, pwned: existsSync(join(folder, 'PWNED')) || readdirSync(folder).length !== 2, status: result.status };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

// ───────────────────────────── Plain rendering ─────────────────────────────

const render = suite('renderTemplate');

render('fills every kind of path', () => {
  const context = makeContext();
  const cases: Array<[string, string]> = [
    ['issue.title', 'Fix the login'],
    ['issue.key', 'ENG-7'],
    ['issue.description', 'It breaks'],
    ['issue.url', 'https://tracker.example/ENG-7'],
    ['issue.priority', 'high'],
    ['issue.source', 'webhook'],
    ['issue.raw.team.name', 'Core'],
    ['vars.branch', 'main'],
    ['vars.release-name', 'r1'],
    ['steps.plan.output', 'the plan'],
    ['steps.pick-one.comment', 'go'],
    ['run.id', 'run_1'],
    ['run.url', 'http://localhost:1/runs/run_1'],
    ['project.name', 'Demo'],
    ['project.path', '/projects/demo'],
    ['workspace', '/work/run_1'],
  ];
  for (const [path, expected] of cases) assert.is(resolvePlaceholder(path, context), expected, path);
  assert.is(renderTemplate('Issue {{ issue.key }}: {{issue.title}} in {{workspace}}', context), 'Issue ENG-7: Fix the login in /work/run_1');
});

render('raw values: numbers and booleans as text, objects as JSON, arrays by index', () => {
  const context = makeContext();
  assert.is(resolvePlaceholder('issue.raw.team.size', context), '4');
  assert.is(resolvePlaceholder('issue.raw.team.active', context), 'true');
  assert.is(resolvePlaceholder('issue.raw.team', context), '{"name":"Core","size":4,"active":true,"lead":null}');
  assert.is(resolvePlaceholder('issue.raw.items.1.id', context), '2');
  assert.is(resolvePlaceholder('issue.raw.tags.0', context), 'a');
  assert.is(resolvePlaceholder('issue.raw.tags.length', context), '');
});

render('arrays are joined with a comma and a space', () => {
  const context = makeContext();
  assert.is(renderTemplate('{{issue.labels}}', context), 'bug, auth');
  assert.is(renderTemplate('{{steps.pick-one.selected}}', context), 'Small, Large');
  assert.is(renderTemplate('{{issue.raw.items}}', context), '{"id":1}, {"id":2}');
});

render('unknown paths, missing values and null render empty', () => {
  const context = makeContext({ run: { id: 'run_1' } });
  for (const path of ['nope', 'issue.colour', 'vars.missing', 'steps.later.output', 'steps.plan.exitCode', 'run.url', 'issue.raw.team.lead', 'issue.raw.team.name.first', 'issue..title', 'workspace.x', '']) {
    assert.is(resolvePlaceholder(path, context), '', path);
  }
  assert.is(renderTemplate('[{{ nope }}][{{issue.title}}]', makeContext({ issue: undefined })), '[][]');
});

render('never renders a value a second time', () => {
  const context = makeContext({ vars: { a: '{{vars.b}}', b: 'secret' } });
  assert.is(renderTemplate('{{vars.a}}', context), '{{vars.b}}');
});

render('cannot walk into prototypes', () => {
  const raw = JSON.parse('{"__proto__": {"polluted": "own"}, "plain": {}}');
  const context = makeContext({ issue: { title: 't', raw } });
  for (const path of ['issue.raw.constructor', 'issue.raw.plain.constructor.name', 'issue.raw.plain.__proto__', 'issue.raw.toString', 'vars.constructor', 'vars.__proto__', 'steps.constructor.output', 'steps.plan.constructor', 'run.constructor', 'project.hasOwnProperty']) {
    assert.is(resolvePlaceholder(path, context), '', path);
  }
  // A key that JSON.parse made an own property is data, not the prototype.
  assert.is(resolvePlaceholder('issue.raw.__proto__.polluted', context), 'own');
});

render('listPlaceholders finds paths with optional spaces', () => {
  assert.equal(listPlaceholders('a {{x}} b {{  y.z  }}'), [
    { path: 'x', start: 2, end: 7 },
    { path: 'y.z', start: 10, end: 21 },
  ]);
});

render('knows which roots exist', () => {
  for (const path of ['issue.title', 'issue.raw', 'issue.raw.a.b', 'vars.x', 'steps.a.output', 'steps.a.selected', 'steps.a.comment', 'run.id', 'run.url', 'project.name', 'project.path', 'workspace']) {
    assert.ok(isKnownPlaceholderRoot(path), path);
  }
  for (const path of ['issue', 'issue.colour', 'vars', 'steps.a', 'steps.a.log', 'run.status', 'project.id', 'workspace.path', 'env.HOME', 'issue.raw.']) {
    assert.not.ok(isKnownPlaceholderRoot(path), path);
  }
});

render.run();

// ───────────────────────────── Environment ─────────────────────────────

const environment = suite('stepEnvironment');

environment('exposes the context under readable names', () => {
  const env = stepEnvironment(makeContext());
  assert.equal(env, {
    FACTORY_ISSUE_TITLE: 'Fix the login',
    FACTORY_ISSUE_KEY: 'ENG-7',
    FACTORY_ISSUE_DESCRIPTION: 'It breaks',
    FACTORY_ISSUE_URL: 'https://tracker.example/ENG-7',
    FACTORY_ISSUE_LABELS: 'bug, auth',
    FACTORY_ISSUE_PRIORITY: 'high',
    FACTORY_ISSUE_SOURCE: 'webhook',
    FACTORY_RUN_ID: 'run_1',
    FACTORY_RUN_URL: 'http://localhost:1/runs/run_1',
    FACTORY_PROJECT_NAME: 'Demo',
    FACTORY_PROJECT_PATH: '/projects/demo',
    FACTORY_WORKSPACE: '/work/run_1',
    FACTORY_VAR_BRANCH: 'main',
    FACTORY_VAR_RELEASE_NAME: 'r1',
    FACTORY_STEP_PLAN_OUTPUT: 'the plan',
    FACTORY_STEP_PICK_ONE_SELECTED: 'Small, Large',
    FACTORY_STEP_PICK_ONE_COMMENT: 'go',
  });
});

environment('leaves out the issue and run URL when there are none, and strips NUL', () => {
  const env = stepEnvironment(makeContext({ issue: undefined, run: { id: 'run_2' }, vars: { 'weird name.é': 'a\0b' } }));
  assert.not.ok(Object.keys(env).some((name) => name.startsWith('FACTORY_ISSUE_')));
  assert.not.ok('FACTORY_RUN_URL' in env);
  assert.is(env.FACTORY_VAR_WEIRD_NAME__, 'ab');
  assert.ok(Object.keys(env).every((name) => /^[A-Z0-9_]+$/.test(name)));
});

environment.run();

// ───────────────────────────── Shell commands ─────────────────────────────

const shell = suite('renderShellCommand');

shell('replaces placeholders by quoted variable references, one per path', () => {
  const { command, env } = renderShellCommand(`git checkout -b {{vars.branch}} && echo "{{issue.title}} {{vars.branch}}" '{{issue.key}}'`, makeContext());
  assert.is(command, `git checkout -b "\${FACTORY_T1}" && echo "\${FACTORY_T2} \${FACTORY_T1}" ''"\${FACTORY_T3}"''`);
  assert.is(env.FACTORY_T1, 'main');
  assert.is(env.FACTORY_T2, 'Fix the login');
  assert.is(env.FACTORY_T3, 'ENG-7');
  assert.is(env.FACTORY_RUN_ID, 'run_1');
});

shell('follows quoting through escapes, substitutions and here-documents', () => {
  const cases: Array<[string, string]> = [
    [`echo \\"{{x}}`, `echo \\""\${FACTORY_T1}"`],
    [`echo "a \\" {{x}}"`, `echo "a \\" \${FACTORY_T1}"`],
    [`echo "it's {{x}}"`, `echo "it's \${FACTORY_T1}"`],
    [`echo "$(echo {{x}})"`, `echo "$(echo "\${FACTORY_T1}")"`],
    ['echo "`echo {{x}}` {{x}}"', 'echo "`echo "${FACTORY_T1}"` ${FACTORY_T1}"'],
    [`echo $'a\\'{{x}}'`, `echo $'a\\''"\${FACTORY_T1}"$''`],
    [`echo "\${X:-{{x}}}"`, `echo "\${X:-\${FACTORY_T1}}"`],
    [`echo # it's {{x}}\necho {{x}}`, `echo # it's {{x}}\necho "\${FACTORY_T1}"`],
    [`cat <<-EOF; echo {{x}}\n\t"{{x}}"\n\tEOF\necho {{x}}`, `cat <<-EOF; echo "\${FACTORY_T1}"\n\t"\${FACTORY_T1}"\n\tEOF\necho "\${FACTORY_T1}"`],
    [`cat <<'EOF'\n{{x}}\nEOF`, `cat <<'EOF'\n\${FACTORY_T1}\nEOF`],
    [`cat <<EOF\nit's "{{x}}\nEOF\necho {{x}}`, `cat <<EOF\nit's "\${FACTORY_T1}\nEOF\necho "\${FACTORY_T1}"`],
    [`cat <<< {{x}}`, `cat <<< "\${FACTORY_T1}"`],
    [`a=( "{{x}}" ); echo "\${a[@]:-{{x}}}"`, `a=( "\${FACTORY_T1}" ); echo "\${a[@]:-\${FACTORY_T1}}"`],
    [`echo "$(case {{x}} in a) echo {{x}};; esac)"`, `echo "$(case "\${FACTORY_T1}" in a) echo "\${FACTORY_T1}";; esac)"`],
    [`diff <(echo {{x}}) - <<< {{x}}`, `diff <(echo "\${FACTORY_T1}") - <<< "\${FACTORY_T1}"`],
  ];
  for (const [template, expected] of cases) {
    assert.is(renderShellCommand(template, makeContext({ vars: {} })).command, expected, template);
  }
});

shell('a dollar or backslash written before a placeholder stays text', () => {
  const context = makeContext({ vars: { v: 'x' } });
  for (const [template, expected] of [
    ['printf "%s\\n" ${{vars.v}} "${{vars.v}}"', '$x\n$x\n'],
    ['printf "%s\\n" \\{{vars.v}} "\\{{vars.v}}"', 'x\n\\x\n'],
  ] as const) {
    const { command, env } = renderShellCommand(template, context);
    assert.is(runInShell('/bin/sh', command, env).stdout, expected, template);
  }
});

shell('a value that looks like a placeholder is not rendered again', () => {
  const { command, env } = renderShellCommand('echo {{vars.a}}', makeContext({ vars: { a: '{{vars.b}}', b: 'no' } }));
  assert.is(runInShell('/bin/sh', command, env).stdout, '{{vars.b}}\n');
});

const hostileValues: Array<[string, string]> = [
  ['command substitution', '$(touch PWNED)'],
  ['backticks', '`touch PWNED`'],
  ['single quote breakout', "'; touch PWNED; '"],
  ['double quote breakout', '" ; touch PWNED ; "'],
  ['escaped quotes', '\\"$(touch PWNED)\\"'],
  ['newline', 'title\ntouch PWNED'],
  ['IFS', '${IFS}touch${IFS}PWNED'],
  ['arithmetic', '$((1+1))'],
  ['star glob', '*'],
  ['question glob', '?'],
  ['backslashes', '\\\\'],
  ['format directive', '%s'],
  ['100 KB', 'x$(touch PWNED)'.repeat(7_000).slice(0, 100_000)],
  ['unicode and emoji', 'Überprüfung 漢字 🚀 \u202e'],
  ['NUL', 'before\0after$(touch PWNED)'],
];

const commandForms = [
  'echo "{{issue.title}}"',
  'echo {{issue.title}}',
  "echo '{{issue.title}}'",
  "printf '%s\\n' \"{{issue.title}}\"",
  'echo "$(echo "{{issue.title}}")"',
  'cat <<EOF\n{{issue.title}}\nEOF',
];

shell('hostile values reach the command as exact text and never run', () => {
  for (const [label, value] of hostileValues) {
    const expected = value.replace(/\0/g, '') + '\n';
    for (const form of commandForms) {
      const { command, env } = renderShellCommand(form, makeContext({ issue: { title: value } }));
      assert.not.ok(command.includes('PWNED'), `${label}: the value is not in the command`);
      const result = runInShell('/bin/sh', command, env);
      const where = `${JSON.stringify(form)} with ${label}`;
      assert.is(result.status, 0, where);
      assert.not.ok(result.pwned, `${where} created a file`);
      // dash's echo interprets backslashes; there the reference is the same echo of the value from a variable.
      const reference = form.startsWith('echo') && value.includes('\\')
        ? runInShell('/bin/sh', 'echo "$REFERENCE"', { REFERENCE: expected.slice(0, -1) }).stdout
        : expected;
      assert.ok(result.stdout === reference, `${where}: printed ${JSON.stringify(result.stdout.slice(0, 80))}`);
    }
  }
});

shell('bash gives the same exact text and runs nothing', () => {
  if (!existsSync('/bin/bash')) return;
  // One bash process runs every form for every value (bash starts slowly; its echo leaves backslashes alone).
  const vars = Object.fromEntries(hostileValues.map(([, value], index) => [`v${index}`, value]));
  const script = hostileValues.flatMap((_, index) => commandForms.map((form) => form.replaceAll('issue.title', `vars.v${index}`))).join('\n');
  const { command, env } = renderShellCommand(script, makeContext({ vars }));
  const result = runInShell('/bin/bash', command, env);
  assert.is(result.status, 0);
  assert.not.ok(result.pwned, 'a file was created');
  const expected = hostileValues.map(([, value]) => (value.replace(/\0/g, '') + '\n').repeat(commandForms.length)).join('');
  assert.ok(result.stdout === expected, `printed ${JSON.stringify(result.stdout.slice(0, 200))}`);
});

shell.run();

// ───────────────────────────── Validation problems ─────────────────────────────

const problems = suite('shellCommandProblems');

const paths = (command: string, severity: 'error' | 'warning') =>
  shellCommandProblems(command).filter((problem) => problem.severity === severity).map((problem) => problem.path);

problems('warns about placeholders in single quotes and where the shell will not expand them', () => {
  assert.equal(paths(`echo '{{issue.title}}' "{{issue.key}}" {{run.id}} '{{issue.title}}'`, 'warning'), ['issue.title']);
  assert.equal(paths(`echo "it's {{issue.key}}" $'{{vars.a}}'`, 'warning'), ['vars.a']);
  assert.equal(paths(`cat <<"EOF"\n{{vars.a}}\nEOF\ncat <<EOF\n{{vars.b}}\nEOF\necho '{{vars.c}}'`, 'warning'), ['vars.a', 'vars.c']);
  assert.equal(paths(`echo "{{issue.title}}" # don't`, 'warning'), []);
});

problems('refuses placeholders where bash runs text as code, wherever they hide', () => {
  const refused = [
    'echo $(( {{vars.n}} * 2 ))',
    'echo "$(( `echo {{vars.n}}` ))"',
    'echo $(( ${x:-{{vars.n}}} ))',
    'echo $(( \'{{vars.n}}\' ))',
    'x=$(( 1 + $(printf %s "{{vars.n}}") ))',
    'while (( {{vars.n}} )); do break; done',
    '[[ $(echo {{vars.n}}) -gt 2 ]]',
    'declare -A m; m[{{vars.n}}]=1',
    'typeset a[{{vars.n}}]=1',
    'echo ${a[@]:{{vars.n}}}',
    'echo "${#a[{{vars.n}}]}"',
    'command read {{vars.n}} < /dev/null',
    'unset "{{vars.n}}"',
    'cat <<-EOF\n\t$[ {{vars.n}} ]\n\tEOF',
  ];
  for (const command of refused) assert.equal(paths(command, 'error'), ['vars.n'], command);
});

problems('keeps data places apart from code places', () => {
  const fine = [
    'echo $(( 1 + 2 )) "{{vars.n}}"',
    'echo "{{vars.n}}" $(( 3 ))',
    'n="{{vars.n}}"; case "$n" in ""|*[!0-9]*) exit 1;; esac; echo $(( n + 1 ))',
    'echo "${x:-{{vars.n}}}" "${x:+{{vars.n}}}" "${x#{{vars.n}}}"',
    'local value="{{vars.n}}"',
    'export PATH="{{vars.n}}:$PATH"',
    'printf -v out "%s" "{{vars.n}}"',
    'read -r -p "{{vars.n}}" answer < /dev/null',
    'x=( "{{vars.n}}" [3]=4 )',
    '[[ "{{vars.n}}" == *x* && -n "{{vars.n}}" ]]',
    'echo "(( {{vars.n}} ))" > "{{vars.n}}.txt" 2>&1',
    'cat <<EOF\n(( {{vars.n}} )) and a[{{vars.n}}]=1\nEOF',
    'case "{{vars.n}}" in (a) echo "$(( 1 ))";; *) ;; esac',
  ];
  for (const command of fine) assert.equal(shellCommandProblems(command), [], command);
});

problems('follows a placeholder through the variables that hold it to a code place', () => {
  const refused: Array<[string, string]> = [
    ['n="{{vars.n}}"; echo $(( n + 1 ))', '`n` holds `{{vars.n}}` and is read as arithmetic in `$(( n + 1 ))`'],
    ['export a="{{vars.n}}"; b=$a; c="${b}"; echo $(( c ))', '`c` holds `{{vars.n}}` (through `a`, `b`) and is read as arithmetic'],
    ['declare -i n; read n <<< "{{vars.n}}"', 'integer variable'],
    ['local -i n=5; n+="{{vars.n}}"', 'integer variable'],
    ['PROMPT_COMMAND="{{vars.n}}"', 'prompt string'],
    ['x="{{vars.n}}"; unset "$x"', 'read as a variable name'],
    ['x="{{vars.n}}"; printf -v "$x" 1', 'read as a variable name'],
    ['x="{{vars.n}}"; [[ 1 -eq x ]]', 'compared as a number'],
    ['x="{{vars.n}}"; echo $[ x ]', 'read as arithmetic in `$[ x ]`'],
    ['x="{{vars.n}}"; sh -c "bash -c \\"echo \\\\\\$((x))\\"" ; export x', 'in the script of `sh -c` in the script of `bash -c`'],
  ];
  for (const [command, says] of refused) {
    const errors = shellCommandProblems(command).filter((problem) => problem.severity === 'error');
    assert.ok(errors.some((problem) => problem.message.includes(says) && problem.path === 'vars.n'), `${command}: ${JSON.stringify(errors)}`);
  }
});

problems('the step\'s own environment and Factory\'s variables hold run text from the start', () => {
  const [error] = shellCommandProblems('[[ $PRIO -gt 2 ]]', { PRIO: 'p{{issue.priority}}', OTHER: 'fixed' });
  assert.is(error!.severity, 'error');
  assert.is(error!.message, '`PRIO` holds `{{issue.priority}}` and is compared as a number (arithmetic) in `[[ $PRIO -gt 2 ]]`, where the shell runs text as code: check it is a number just before: case "$PRIO" in ""|*[!0-9]*) exit 1;; esac (or, in bash, keep only its digits: digits="${PRIO//[!0-9]/}", then use $digits)');
  assert.equal(shellCommandProblems('[[ $OTHER -gt 2 ]]', { OTHER: 'fixed' }), []);
  const [factory] = shellCommandProblems('y=$FACTORY_VAR_COUNT; eval "echo $y"');
  assert.is(factory!.message, '`y` holds text of the run (through `FACTORY_VAR_COUNT`) and is parsed as code again by `eval`: a value such as $(rm -rf ~) would run; pass it as an argument instead (sh -c \'… "$1" …\' _ "$y")');
});

problems('warns where another program parses the value as code again', () => {
  const cases: Array<[string, string]> = [
    ['sudo -n bash -o pipefail -c "make {{vars.n}}"', 'bash -c'],
    ['find . -exec sh -c "echo {{vars.n}}" \\;', 'sh -c'],
    ['python3 -c "print({{vars.n}})"', 'python3 -c'],
    ['node -e "console.log({{vars.n}})"', 'node -e'],
    ['perl -ne "print if /{{vars.n}}/" file', 'perl -ne'],
    ['sed -i "s/x/{{vars.n}}/" file', 'sed'],
    ['sed -e "s/x/{{vars.n}}/" file', 'sed'],
    ['awk "{ print \\"{{vars.n}}\\" }" file', 'awk'],
    ['ssh -p 22 host "deploy {{vars.n}}"', 'ssh'],
    ['printf "%s" "{{vars.n}}" | bash -s', 'bash'],
    ['cat <<EOF | sh\necho {{vars.n}}\nEOF', 'sh'],
    ['x=$(bash <<< "echo {{vars.n}}")', 'bash'],
  ];
  for (const [command, by] of cases) {
    const found = shellCommandProblems(command);
    assert.is(found.length, 1, `${command}: ${JSON.stringify(found)}`);
    assert.is(found[0]!.severity, 'warning', command);
    assert.ok(found[0]!.message.includes(`\`${by}\``), `${command}: ${found[0]!.message}`);
  }
  for (const command of [
    'sed "s/x/y/" "{{vars.n}}"',
    'sed -e "s/x/y/" "{{vars.n}}"',
    'awk -v name="{{vars.n}}" "{ print name }" file',
    'awk -f prog.awk "{{vars.n}}"',
    'node script.js "{{vars.n}}"',
    'ssh host deploy < "{{vars.n}}"',
    'echo "{{vars.n}}" | tee out | wc -l',
    'x=( eval "{{vars.n}}" )',
  ]) assert.equal(shellCommandProblems(command), [], command);
});

problems('a command of 100,000 characters is scanned in linear time', () => {
  // No clock here: each unit takes some 50 ms, while a scan quadratic in the length would take
  // minutes and be stopped by the test runner's per-file limit (3 min), which fails the file. The
  // figures, beside an ordinary script's, are in test/bench/shell-scan.bench.ts.
  for (const unit of hostileShellUnits) shellCommandProblems(repeatToLength(unit, 100_000));
});

problems.run();
