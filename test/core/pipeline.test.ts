import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pipelineTemplateIds } from '../../src/core/api';
import type { Pipeline, PipelineTemplateId, Step } from '../../src/core/api';
import { ValidationError } from '../../src/core/errors';
import type { ValidationIssue } from '../../src/core/errors';
import { isId } from '../../src/core/ids';
import { pipelineWarnings, validatePipeline } from '../../src/core/pipeline';
import { stepIdPattern } from '../../src/core/pipeline-steps';
import { duplicatePipeline, exportPipeline, parsePipelineExport } from '../../src/core/pipeline-export';
import { pipelineFromTemplate } from '../../src/core/pipeline-templates';
import type { PipelineContext } from '../../src/core/pipeline';

const projectId = 'prj_0123456789abcdef';
const context: PipelineContext = { projectIds: [projectId], harnessIds: ['claude', 'codex'] };
const now = 1_700_000_000_000;

function pipelineInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Ship',
    projectId,
    variables: {},
    steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'make' }],
    ...overrides,
  };
}

function withSteps(...steps: unknown[]): Record<string, unknown> {
  return pipelineInput({ steps });
}

/** The ValidationError `action` throws; fails the test when it throws nothing or something else. */
function validationErrorOf(action: () => unknown): ValidationError {
  try {
    action();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  assert.unreachable('expected a ValidationError');
  throw new Error('unreachable');
}

function issuesOf(input: unknown): ValidationIssue[] {
  return validationErrorOf(() => validatePipeline(input, context, now)).issues;
}

/** Asserts one issue at `field` whose message contains every fragment. */
function assertIssue(issues: ValidationIssue[], field: string, ...fragments: string[]): void {
  const found = issues.some((issue) => issue.field === field && fragments.every((fragment) => issue.message.includes(fragment)));
  assert.ok(found, `no issue at ${field} with ${JSON.stringify(fragments)}; got:\n${issues.map((issue) => `${issue.field}: ${issue.message}`).join('\n')}`);
}

const shell = (id: string, command: string, more: Record<string, unknown> = {}) => ({ id, name: id, kind: 'shell', command, ...more });
const agent = (id: string, prompt: string, more: Record<string, unknown> = {}) => ({ id, name: id, kind: 'agent', prompt, ...more });
const approval = (id: string, message: string, more: Record<string, unknown> = {}) => ({ id, name: id, kind: 'approval', message, ...more });

// ───────────────────────────── validatePipeline: pipeline fields ─────────────────────────────

const validation = suite('validatePipeline');

validation('a new pipeline gets a fresh pl_ id, both times now, trimmed names and no unknown fields', () => {
  const pipeline = validatePipeline(
    pipelineInput({ id: '', name: '  Ship  ', owner: 'mallory', steps: [{ ...shell(' build ', 'make'), name: ' Build ', shell: '/bin/zsh' }] }),
    context, now,
  );
  assert.ok(isId(pipeline.id, 'pl'), pipeline.id);
  assert.equal(pipeline, {
    id: pipeline.id, projectId, name: 'Ship', variables: {},
    steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'make' }], createdAt: now, updatedAt: now,
  });
});

validation('saving an existing pipeline keeps its id and creation time and moves updatedAt', () => {
  const pipeline = validatePipeline(pipelineInput({ id: 'pl_0123456789abcdef', createdAt: 5, updatedAt: 6 }), context, now);
  assert.is(pipeline.id, 'pl_0123456789abcdef');
  assert.is(pipeline.createdAt, 5);
  assert.is(pipeline.updatedAt, now);
});

validation('keeps the optional fields a user set and drops blank ones', () => {
  const pipeline = validatePipeline(
    pipelineInput({ description: ' Builds it ', variables: { branch: 'main' }, harnessId: 'codex', model: ' ', maxParallelRuns: 3 }),
    context, now,
  );
  assert.is(pipeline.description, 'Builds it');
  assert.equal(pipeline.variables, { branch: 'main' });
  assert.is(pipeline.harnessId, 'codex');
  assert.not.ok('model' in pipeline);
  assert.is(pipeline.maxParallelRuns, 3);
});

validation('refuses an id that is not a pipeline id, quoting it', () => {
  assertIssue(issuesOf(pipelineInput({ id: 'run_../../etc' })), 'id', '`run_../../etc`', 'not a pipeline id');
  assertIssue(issuesOf(pipelineInput({ id: 42 })), 'id', '`42`');
});

validation('refuses input that is not an object', () => {
  for (const input of [null, undefined, 42, 'pipeline', [pipelineInput()], true]) {
    const error = validationErrorOf(() => validatePipeline(input, context, now));
    assert.match(error.message, 'A pipeline must be an object');
  }
});

validation('a pipeline needs a name of at most 200 characters', () => {
  assertIssue(issuesOf(pipelineInput({ name: undefined })), 'name', 'The name is empty: give the pipeline a name');
  assertIssue(issuesOf(pipelineInput({ name: '   ' })), 'name', 'The name is empty');
  assertIssue(issuesOf(pipelineInput({ name: 7 })), 'name', 'The name must be text, not `7`');
  assertIssue(issuesOf(pipelineInput({ name: 'x'.repeat(201) })), 'name', '201 characters', 'the most is 200');
});

validation('a pipeline belongs to a known project', () => {
  assertIssue(issuesOf(pipelineInput({ projectId: undefined })), 'projectId', 'The project is not chosen: a pipeline belongs to a project');
  assertIssue(issuesOf(pipelineInput({ projectId: 'prj_ffffffffffffffff' })), 'projectId', 'The project `prj_ffffffffffffffff` is not a known project');
});

validation('variables map valid names to text', () => {
  assertIssue(issuesOf(pipelineInput({ variables: ['a'] })), 'variables', 'The variables must be an object', 'a list');
  assertIssue(issuesOf(pipelineInput({ variables: { 'my var': 'x' } })), 'variables', 'The variables include `my var`, which is not a valid name');
  assertIssue(issuesOf(pipelineInput({ variables: { '1st': 'x' } })), 'variables', '`1st`');
  assertIssue(issuesOf(pipelineInput({ variables: { branch: 5 } })), 'variables.branch', 'The variable `branch` must be text, not `5`');
  assert.equal(validatePipeline(pipelineInput({ variables: null }), context, now).variables, {});
});

validation('a harness named by the pipeline must be a known harness', () => {
  assertIssue(issuesOf(pipelineInput({ harnessId: 'gpt-cli' })), 'harnessId', 'The harness `gpt-cli` is not a known harness: choose one of claude, codex');
});

validation('maxParallelRuns is a whole number from 1 to 100', () => {
  for (const bad of [0, 101, 1.5, '3', -1]) {
    assertIssue(issuesOf(pipelineInput({ maxParallelRuns: bad })), 'maxParallelRuns', 'The maximum of parallel runs must be a whole number from 1 to 100', JSON.stringify(bad).replace(/"/g, ''));
  }
  assert.is(validatePipeline(pipelineInput({ maxParallelRuns: 100 }), context, now).maxParallelRuns, 100);
});

validation('a pipeline needs 1 to 100 steps in a list', () => {
  assertIssue(issuesOf(pipelineInput({ steps: [] })), 'steps', 'The list of steps is empty: a pipeline needs at least one step');
  assertIssue(issuesOf(pipelineInput({ steps: undefined })), 'steps', 'at least one step');
  assertIssue(issuesOf(pipelineInput({ steps: { build: shell('build', 'make') } })), 'steps', 'The list of steps must be a list');
  const many = Array.from({ length: 101 }, (_, index) => shell(`s${index}`, 'true'));
  assertIssue(issuesOf(pipelineInput({ steps: many })), 'steps', 'has 101 steps', 'the most is 100');
  assert.is(validatePipeline(pipelineInput({ steps: many.slice(0, 100) }), context, now).steps.length, 100);
});

validation('reports every issue at once, one line each', () => {
  const error = validationErrorOf(() => validatePipeline(
    { name: '', projectId: 'prj_nope', steps: [shell('build', ''), agent('Fix', 'go'), { id: 'ok', name: 'Ok', kind: 'robot' }] },
    context, now,
  ));
  const fields = error.issues.map((issue) => issue.field);
  assert.equal(fields, ['projectId', 'name', 'steps.build.command', 'steps.#2.id', 'steps.ok.kind']);
  assert.is(error.message.split('\n').length, 5);
  const lines = error.message.split('\n');
  assert.ok(lines.includes('Step 1: the command is empty: a shell step runs a command'), error.message);
  assert.ok(lines.includes('Step 2: the id `Fix` may use only a–z, 0–9, - and _, starting with a letter (at most 40)'), error.message);
  assert.ok(lines.includes('Step 3: the kind `robot` is not a step kind; use one of shell, agent, approval, pullRequest'), error.message);
  assert.not.match(error.message, /steps\.|projectId:|^name:/m, 'the field in words, no path before it');
  assert.equal(error.issues.find((issue) => issue.field === 'steps.#2.id')?.message, 'Step 2: the id `Fix` may use only a–z, 0–9, - and _, starting with a letter (at most 40)', 'the path stays beside the words');
});

// ───────────────────────────── validatePipeline: steps ─────────────────────────────

const steps = suite('validatePipeline steps');

steps('a step is an object; the field names its position when it has no usable id', () => {
  const issues = issuesOf(withSteps(shell('build', 'make'), null, 3, ['x']));
  assertIssue(issues, 'steps.#2', 'Step 2 must be an object, not `null`');
  assertIssue(issues, 'steps.#3', '`3`');
  assertIssue(issues, 'steps.#4', 'a list');
});

steps('a step id is lowercase, starts with a letter and has at most 40 characters', () => {
  assert.ok(stepIdPattern.test('a'));
  assert.ok(stepIdPattern.test('build_2-x'));
  for (const bad of ['Build', '2build', '-x', 'a'.repeat(41), 'with space', 'ü']) {
    assert.not.ok(stepIdPattern.test(bad), bad);
    assertIssue(issuesOf(withSteps(shell(bad, 'make'))), 'steps.#1.id', `Step 1: the id \`${bad}\` may use only a–z, 0–9, - and _`);
  }
  assertIssue(issuesOf(withSteps({ name: 'Build', kind: 'shell', command: 'make' })), 'steps.#1.id', 'Step 1: the id is empty');
});

steps('step ids are unique: the second use is reported, naming the first', () => {
  const issues = issuesOf(withSteps(shell('build', 'make'), shell('test', 'make test'), shell('build', 'make again')));
  assert.is(issues.length, 1);
  assertIssue(issues, 'steps.#3.id', 'Step 3: the id `build` is already the id of step 1');
});

steps('a step needs a name', () => {
  assertIssue(issuesOf(withSteps({ id: 'build', kind: 'shell', command: 'make' })), 'steps.build.name', 'Step 1: the name is empty: give the step a name');
  assertIssue(issuesOf(withSteps(shell('test', 'make'), { ...shell('build', 'make'), name: ' ' })), 'steps.build.name', 'Step 2: the name is empty');
});

steps('an unknown kind is refused, naming the valid kinds', () => {
  assertIssue(issuesOf(withSteps({ id: 'deploy', name: 'Deploy', kind: 'docker' })), 'steps.deploy.kind', '`docker` is not a step kind', 'shell, agent, approval');
  assertIssue(issuesOf(withSteps({ id: 'deploy', name: 'Deploy' })), 'steps.deploy.kind', 'Step 1: the kind is missing', 'shell, agent, approval');
});

steps('retries, timeoutSec and continueOnError are checked on shell and agent steps', () => {
  const issues = issuesOf(withSteps(
    shell('build', 'make', { retries: 11, timeoutSec: 0, continueOnError: 'yes' }),
    agent('fix', 'Fix it', { retries: -1, timeoutSec: 86_401 }),
  ));
  assertIssue(issues, 'steps.build.retries', 'from 0 to 10', '`11`');
  assertIssue(issues, 'steps.build.timeoutSec', 'from 1 to 86400', '`0`');
  assertIssue(issues, 'steps.build.continueOnError', 'Step 1: the switch “Continue the run when this step fails” must be true or false, not `yes`');
  assertIssue(issues, 'steps.fix.retries', 'Step 2: the retries', '`-1`');
  assertIssue(issues, 'steps.fix.timeoutSec', '`86401`');
  const [step] = validatePipeline(withSteps(shell('build', 'make', { retries: 2, timeoutSec: 60, continueOnError: true })), context, now).steps;
  assert.equal(step, { id: 'build', name: 'build', kind: 'shell', command: 'make', retries: 2, timeoutSec: 60, continueOnError: true });
});

steps('a shell step needs a command; its env maps valid, unreserved names to text', () => {
  assertIssue(issuesOf(withSteps(shell('deploy', '  '))), 'steps.deploy.command', 'Step 1: the command is empty: a shell step runs a command');
  const issues = issuesOf(withSteps(shell('deploy', 'make', { env: { 'BAD-NAME': 'x', FACTORY_T1: 'x', TOKEN: 5 } })));
  assertIssue(issues, 'steps.deploy.env', 'Step 1: the environment variables include `BAD-NAME`, which is not a valid name');
  assertIssue(issues, 'steps.deploy.env', 'Step 1: the environment variables include `FACTORY_T1`, which starts with FACTORY_, kept for the values Factory passes to the step');
  assertIssue(issues, 'steps.deploy.env.TOKEN', 'Step 1: the environment variable `TOKEN` must be text, not `5`');
  const [step] = validatePipeline(withSteps(shell('deploy', 'make', { env: { TOKEN: 'secret' } })), context, now).steps;
  assert.equal((step as Step & { env: unknown }).env, { TOKEN: 'secret' });
});

steps('an agent step needs a prompt, a known harness and a stall time from 10 s', () => {
  const issues = issuesOf(withSteps(agent('fix', '', { harnessId: 'robot', stallSec: 5 })));
  assertIssue(issues, 'steps.fix.prompt', 'Step 1: the prompt is empty: say what the agent should do');
  assertIssue(issues, 'steps.fix.harnessId', 'Step 1: the harness `robot` is not a known harness');
  assertIssue(issues, 'steps.fix.stallSec', 'Step 1: the stall warning must be a whole number from 10 to 86400', '`5`');
  const [step] = validatePipeline(withSteps(agent('fix', 'Fix it', { systemPrompt: 'Be brief', harnessId: 'claude', model: ' opus ', stallSec: 10 })), context, now).steps;
  assert.equal(step, { id: 'fix', name: 'fix', kind: 'agent', prompt: 'Fix it', systemPrompt: 'Be brief', harnessId: 'claude', model: 'opus', stallSec: 10 });
});

steps('an approval step needs a message; its choices have a mode and 1 to 20 distinct labels', () => {
  assertIssue(issuesOf(withSteps(approval('review', ''))), 'steps.review.message', 'Step 1: the message is empty: tell the person what to decide');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'some', options: ['a'] } }))), 'steps.review.choices.mode', 'Step 1: the choice mode `some`', 'single or multiple');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'single', options: [] } }))), 'steps.review.choices.options', 'an empty list');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'single' } }))), 'steps.review.choices.options', 'list of 1 to 20');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'single', options: ['Yes', ' ', 'Yes ', 3] } }))), 'steps.review.choices.options', 'Step 1: the options have an empty label: option 2');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'single', options: ['Yes', 'Yes '] } }))), 'steps.review.choices.options', 'Step 1: the options repeat `Yes`, the label of option 1: option 2');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'single', options: ['Yes', 3] } }))), 'steps.review.choices.options', 'Step 1: the options must be text, not `3`: option 2');
  const many = Array.from({ length: 21 }, (_, index) => `Option ${index}`);
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: { mode: 'multiple', options: many } }))), 'steps.review.choices.options', 'Step 1: the options has 21 options');
  assertIssue(issuesOf(withSteps(approval('review', 'Ok?', { choices: 'Yes,No' }))), 'steps.review.choices', 'must be an object');
});

steps('an approval step drops retries, timeout and continueOnError: it waits for a person', () => {
  const [step] = validatePipeline(withSteps(approval('review', 'Ok?', {
    retries: 99, timeoutSec: 'soon', continueOnError: true, choices: { mode: 'multiple', options: [' A ', 'B'] },
  })), context, now).steps;
  assert.equal(step, { id: 'review', name: 'review', kind: 'approval', message: 'Ok?', choices: { mode: 'multiple', options: ['A', 'B'] } });
});

// ───────────────────────────── validatePipeline: template references ─────────────────────────────

const references = suite('validatePipeline references');

references('a reference to a later step names the step and the field', () => {
  const issues = issuesOf(withSteps(approval('review', 'Deployed: {{steps.deploy.output}}'), shell('deploy', 'make deploy')));
  assert.is(issues.length, 1);
  assert.is(issues[0]!.field, 'steps.review.message');
  assert.is(issues[0]!.message, 'Step 1: the message uses `{{steps.deploy.output}}`, but step `deploy` does not come before this step');
});

references('a step may not refer to itself or to a step that does not exist', () => {
  assertIssue(issuesOf(withSteps(shell('build', 'echo "{{ steps.build.output }}"'))), 'steps.build.command', 'step `build`', 'does not come before');
  assertIssue(issuesOf(withSteps(shell('build', 'echo "{{steps.biuld.output}}"'))), 'steps.build.command', 'step `biuld`', 'not in this pipeline');
});

references('selected and comment come only from approval steps', () => {
  const issues = issuesOf(withSteps(shell('build', 'make'), agent('fix', 'Fix {{steps.build.selected}} and {{steps.build.comment}}')));
  assertIssue(issues, 'steps.fix.prompt', '`{{steps.build.selected}}`', 'a shell step', 'only approval steps have selected');
  assertIssue(issues, 'steps.fix.prompt', '`{{steps.build.comment}}`', 'only approval steps have comment');
  const pipeline = validatePipeline(withSteps(approval('choose', 'Pick', { choices: { mode: 'single', options: ['a', 'b'] } }),
    shell('use', 'echo "{{steps.choose.selected}} {{steps.choose.comment}} {{steps.choose.output}}"')), context, now);
  assert.is(pipeline.steps.length, 2);
});

references('a placeholder needs a known root and a step reference needs a known field', () => {
  const issues = issuesOf(withSteps(shell('build', 'make'), shell('deploy', 'echo "{{secrets.token}} {{steps.build}} {{steps.build.exitCode}} {{}}"')));
  assertIssue(issues, 'steps.deploy.command', 'Step 2: the command uses `{{secrets.token}}`, which names nothing Factory fills in', 'issue.<field>', 'vars.<name>', 'workspace');
  assertIssue(issues, 'steps.deploy.command', 'uses `{{steps.build}}`, which should name a step and what it gave');
  assertIssue(issues, 'steps.deploy.command', '`{{steps.build.exitCode}}`', 'output, selected, comment');
  assertIssue(issues, 'steps.deploy.command', '`{{}}`, which names nothing');
  assertIssue(issuesOf(withSteps(agent('fix', 'Fix {{issue.titel}}'))), 'steps.fix.prompt', 'Step 1: the prompt uses `{{issue.titel}}`, which names nothing Factory fills in');
});

references('references are checked in env values, system prompts and approval messages too', () => {
  const issues = issuesOf(withSteps(
    shell('build', 'make', { env: { TITLE: '{{steps.later.output}}' } }),
    agent('fix', 'Fix', { systemPrompt: '{{nope}}' }),
    approval('review', '{{steps.build.selected}}'),
    shell('later', 'true'),
  ));
  assertIssue(issues, 'steps.build.env.TITLE', 'step `later`', 'does not come before');
  assertIssue(issues, 'steps.fix.systemPrompt', '`{{nope}}`');
  assertIssue(issues, 'steps.review.message', 'only approval steps have selected');
});

references('variables the pipeline does not define may be used: a run can bring them', () => {
  const pipeline = validatePipeline(withSteps(shell('build', 'make "{{vars.target}}" "{{ issue.raw.repo.name }}" "{{run.id}}" "{{workspace}}"')), context, now);
  assert.is(pipeline.steps.length, 1);
});

// ───────────────────────────── pipelineWarnings ─────────────────────────────

const warnings = suite('pipelineWarnings');

function warningsFor(...stepList: unknown[]): ValidationIssue[] {
  return pipelineWarnings(validatePipeline(withSteps(...stepList), context, now));
}

warnings('warns about a placeholder inside single quotes in a shell command', () => {
  const found = warningsFor(shell('build', `echo '{{issue.title}}' && echo $'{{issue.key}}'`));
  assert.is(found.length, 2);
  assertIssue(found, 'steps.build.command', 'Step 1: the command has `{{issue.title}}`, which stands inside single quotes', 'put it in double quotes instead: "{{issue.title}}"');
  assertIssue(found, 'steps.build.command', '`{{issue.key}}`');
  assertIssue(warningsFor(shell('count', `cat <<'EOF'\n{{vars.count}}\nEOF`)), 'steps.count.command', 'Step 1: the command has `{{vars.count}}`, which stands in a quoted here-document');
  assertIssue(issuesOf(withSteps(shell('count', 'echo $(( {{vars.count}} + 1 ))'))), 'steps.count.command', 'Step 1: the command has `{{vars.count}}`, which stands inside $(( ))');
});

warnings('does not warn about placeholders in double quotes, after escaped quotes, or after a closed quote', () => {
  assert.equal(warningsFor(shell('build', `echo "{{issue.title}}" "it's {{issue.key}}" \\'{{issue.url}} 'a' {{run.id}} "\\"'{{project.name}}'\\""`)), []);
});

warnings('warns once per field about a variable with no default, and saving still works', () => {
  const pipeline = validatePipeline(pipelineInput({
    variables: { branch: 'main' },
    steps: [shell('build', 'git checkout "{{vars.branch}}" && make "{{vars.target}}" "{{vars.target}}"')],
  }), context, now);
  const found = pipelineWarnings(pipeline);
  assert.is(found.length, 1);
  assertIssue(found, 'steps.build.command', 'Step 1: the command uses `{{vars.target}}`, which has no default');
});

// ───────────────────────────── Templates ─────────────────────────────

const templates = suite('pipelineFromTemplate');

templates('every template is a valid pipeline without warnings, under its display name', () => {
  const names: Record<PipelineTemplateId, string> = { demo: 'Demo', feature: 'Feature', bugfix: 'Bug fix', review: 'Review', blank: 'Blank' };
  for (const templateId of pipelineTemplateIds) {
    const pipeline = pipelineFromTemplate(templateId, projectId, now);
    assert.is(pipeline.name, names[templateId]);
    assert.is(pipeline.projectId, projectId);
    assert.ok(isId(pipeline.id, 'pl'));
    assert.equal(validatePipeline(pipeline, context, now), pipeline, templateId);
    assert.equal(pipelineWarnings(pipeline), [], templateId);
  }
});

templates('the demo needs no agent: a shell step, a single choice, and a step that echoes the choice', () => {
  const pipeline = pipelineFromTemplate('demo', projectId, now);
  assert.equal(pipeline.steps.map((step) => step.kind), ['shell', 'approval', 'shell']);
  const [prepare, choose, report] = pipeline.steps;
  assert.match((prepare as { command: string }).command, '"Working on {{issue.title}}"');
  assert.equal(choose, { ...choose, id: 'choose', choices: { mode: 'single', options: ['Ship it', 'Polish first', 'Start over'] } });
  assert.match((report as { command: string }).command, '{{steps.choose.selected}}');
  assert.match((report as { command: string }).command, '{{steps.choose.comment}}');
});

templates('feature and bugfix let an agent work, run the tests and ask a person', () => {
  assert.equal(pipelineFromTemplate('feature', projectId, now).steps.map((step) => step.kind), ['agent', 'shell', 'approval', 'shell']);
  assert.equal(pipelineFromTemplate('bugfix', projectId, now).steps.map((step) => step.id), ['reproduce', 'fix', 'test', 'review']);
  assert.equal(pipelineFromTemplate('blank', projectId, now).steps.map((step) => step.id), ['hello']);
});

templates('with a GitHub account, feature and bugfix end with an approval then a pull request through it, and review answers a review', () => {
  const github = [{ id: 'con_github', kind: 'github', name: 'GitHub' }];
  const withAccount = { ...context, connections: github };
  for (const templateId of ['feature', 'bugfix'] as const) {
    const pipeline = pipelineFromTemplate(templateId, projectId, now, 'con_github');
    assert.equal(pipeline.steps.slice(-2).map((step) => step.kind), ['approval', 'pullRequest'], templateId);
    assert.is((pipeline.steps.at(-1) as { connectionId: string }).connectionId, 'con_github');
    assert.not.ok(pipeline.steps.some((step) => step.id === 'commit'), 'no local commit beside the pull request');
    assert.equal(validatePipeline(pipeline, withAccount, now), pipeline, templateId);
  }
  const review = pipelineFromTemplate('review', projectId, now, 'con_github');
  assert.equal(review.steps.map((step) => step.kind), ['agent', 'shell', 'pullRequest']);
  assert.match((review.steps[0] as { prompt: string }).prompt, 'Address the review: {{issue.description}}');
  assert.equal(pipelineFromTemplate('review', projectId, now).steps.map((step) => step.kind), ['agent', 'shell', 'shell'], 'without an account: a local commit');
});

templates('each call gives a new pipeline that shares nothing with the last', () => {
  const first = pipelineFromTemplate('demo', projectId, now);
  const second = pipelineFromTemplate('demo', projectId, now);
  assert.is.not(first.id, second.id);
  (first.steps[1] as { choices: { options: string[] } }).choices.options.push('Changed');
  assert.is((second.steps[1] as { choices: { options: string[] } }).choices.options.length, 3);
});

templates('an unknown template is refused, naming the valid ones', () => {
  for (const bad of ['release', '__proto__', 'toString']) {
    const error = validationErrorOf(() => pipelineFromTemplate(bad as PipelineTemplateId, projectId, now));
    assert.match(error.message, `There is no template \`${bad}\``);
    assert.match(error.message, 'demo, feature, bugfix, review, blank');
  }
});

// ───────────────────────────── Duplicate, export, import ─────────────────────────────

const sharing = suite('duplicate, export and import');

function richPipeline(): Pipeline {
  return validatePipeline(pipelineInput({
    id: 'pl_00000000000000aa', description: 'All kinds', variables: { branch: 'main' }, harnessId: 'claude', model: 'opus', maxParallelRuns: 2,
    steps: [
      shell('build', 'make "{{vars.branch}}"', { env: { API_TOKEN: 'hunter2', REGION: 'eu' }, retries: 1, timeoutSec: 60 }),
      agent('fix', 'Fix {{steps.build.output}}', { systemPrompt: 'Terse', harnessId: 'codex', stallSec: 30 }),
      approval('review', 'Ship?', { choices: { mode: 'single', options: ['Yes', 'No'] } }),
    ],
  }), context, 1000);
}

sharing('a duplicate gets a fresh id, new times, " (copy)" and equal but separate steps', () => {
  const original = richPipeline();
  const copy = duplicatePipeline(original, now);
  assert.ok(isId(copy.id, 'pl'));
  assert.is.not(copy.id, original.id);
  assert.is(copy.name, 'Ship (copy)');
  assert.is(copy.createdAt, now);
  assert.is(copy.updatedAt, now);
  assert.equal(copy.steps, original.steps);
  assert.equal({ ...copy, id: original.id, name: original.name, createdAt: 1000, updatedAt: 1000 }, original);
  (copy.steps[0] as { env: Record<string, string> }).env.REGION = 'us';
  assert.is((original.steps[0] as { env: Record<string, string> }).env.REGION, 'eu');
});

sharing('a duplicate of a 200-character name still fits the name limit', () => {
  const copy = duplicatePipeline(validatePipeline(pipelineInput({ name: 'n'.repeat(200) }), context, now), now);
  assert.is(copy.name.length, 200);
  assert.ok(copy.name.endsWith(' (copy)'));
  validatePipeline(copy, context, now);
});

sharing('an export starts with the marker and carries no ids, project, times or env values', () => {
  const text = exportPipeline(richPipeline());
  assert.ok(text.startsWith('{\n  "servicePipeline": 1,'), text.slice(0, 40));
  const data = JSON.parse(text);
  for (const field of ['id', 'projectId', 'createdAt', 'updatedAt']) assert.not.ok(field in data, field);
  assert.not.match(text, 'hunter2');
  assert.equal(data.steps[0].env, { API_TOKEN: '', REGION: '' });
  assert.is(data.steps[1].harnessId, 'codex');
});

sharing('importing an export gives back the same pipeline, with env values left to fill in', () => {
  const original = richPipeline();
  const imported = parsePipelineExport(exportPipeline(original));
  assert.not.ok('id' in imported);
  const saved = validatePipeline({ ...imported, projectId }, context, now);
  const expectedSteps = original.steps.map((step) => (step.id === 'build' ? { ...step, env: { API_TOKEN: '', REGION: '' } } : step));
  assert.equal({ ...saved, id: original.id, createdAt: 1000, updatedAt: 1000 }, { ...original, steps: expectedSteps });
  assert.is.not(saved.id, original.id);
});

sharing('import refuses text that is not a Factory export of version 1', () => {
  assert.match(validationErrorOf(() => parsePipelineExport('hello there')).message, /^This is not JSON: /);
  assert.match(validationErrorOf(() => parsePipelineExport('{}')).message, 'This is not a Factory pipeline export: the field servicePipeline is missing');
  assert.match(validationErrorOf(() => parsePipelineExport('[1]')).message, 'not a Factory pipeline export');
  const future = JSON.stringify({ servicePipeline: 2, name: 'x', variables: {}, steps: [shell('a', 'true')] });
  assert.match(validationErrorOf(() => parsePipelineExport(future)).message, 'version 2 is not supported; this Factory reads version 1');
  assert.match(validationErrorOf(() => parsePipelineExport('{"servicePipeline":"1"}')).message, 'version `1` is not supported');
});

sharing('import checks the steps as saving does', () => {
  const broken = JSON.parse(exportPipeline(richPipeline()));
  broken.steps[1].prompt = '';
  broken.steps[2].message = 'After {{steps.nowhere.output}}';
  const error = validationErrorOf(() => parsePipelineExport(JSON.stringify(broken)));
  assertIssue(error.issues, 'steps.fix.prompt', 'the prompt is empty');
  assertIssue(error.issues, 'steps.review.message', 'step `nowhere`');
});

// ───────────────────────────── Hostile input ─────────────────────────────

const hostile = suite('hostile input');

hostile('wrong types at every level give a ValidationError, never a TypeError', () => {
  const inputs: unknown[] = [
    pipelineInput({ steps: [null, [], 1, 'shell', true] }),
    pipelineInput({ name: { toString: 'x' }, projectId: [], variables: 'x', harnessId: {}, model: 3, description: [] }),
    withSteps({ id: [], name: {}, kind: 'shell', command: {}, env: [], retries: '1' }),
    withSteps({ id: 'a', name: 'a', kind: 'agent', prompt: [], systemPrompt: 1, harnessId: [], model: {}, stallSec: null }),
    withSteps({ id: 'a', name: 'a', kind: 'approval', message: {}, choices: { mode: [], options: 'a' } }),
    withSteps({ id: 'a', name: 'a', kind: ['shell'] }),
    JSON.parse('{"name":"x","steps":[{"id":"a","name":"a","kind":"approval","message":"m","choices":{"mode":"single","options":[null,{}]}}]}'),
  ];
  for (const input of inputs) validationErrorOf(() => validatePipeline(input, context, now));
  for (const text of ['null', '1', '"x"', '{"servicePipeline":1}', '{"servicePipeline":1,"steps":{"length":3}}']) {
    validationErrorOf(() => parsePipelineExport(text));
  }
});

hostile('__proto__ keys neither pollute prototypes nor reach the result', () => {
  const input = JSON.parse(`{"name":"x","projectId":"${projectId}","__proto__":{"polluted":1},
    "variables":{"__proto__":"x"},
    "steps":[{"id":"a","name":"a","kind":"shell","command":"true","env":{"__proto__":"y"},"__proto__":{"kind":"agent"}}]}`);
  const issues = issuesOf(input);
  assertIssue(issues, 'variables', 'The variables include `__proto__`, which cannot be a name');
  assertIssue(issues, 'steps.a.env', 'Step 1: the environment variables include `__proto__`, which cannot be a name');
  assert.is(issues.length, 2);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  const inherited = Object.create({ name: 'Inherited', projectId, steps: [shell('a', 'true')] });
  assertIssue(issuesOf(inherited), 'name', 'The name is empty');
});

hostile('a 10 MB name gives a short message', () => {
  const huge = 'x'.repeat(10 * 1024 * 1024);
  const error = validationErrorOf(() => validatePipeline(pipelineInput({ name: huge, steps: [shell('a', huge)] }), context, now));
  assertIssue(error.issues, 'name', '10485760 characters', 'the most is 200');
  assertIssue(error.issues, 'steps.a.command', 'the most is 100000');
  assert.ok(error.message.length < 500, String(error.message.length));
  const importError = validationErrorOf(() => parsePipelineExport(huge));
  assert.ok(importError.message.length < 300, String(importError.message.length));
});

hostile('refuses NUL in every text, naming the field', () => {
  const issues = issuesOf(pipelineInput({
    name: 'Ship\0', description: 'd\0', variables: { branch: 'main\0' }, model: 'm\0',
    steps: [
      shell('build', 'make\0all', { name: 'Build\0', env: { TOKEN: 'x\0' } }),
      agent('fix', 'Fix\0 it', { systemPrompt: 'be\0 careful' }),
      approval('gate', 'Go\0?', { choices: { mode: 'single', options: ['Yes\0', 'No'] } }),
    ],
  }));
  for (const field of ['name', 'description', 'variables.branch', 'model', 'steps.build.name', 'steps.build.command', 'steps.build.env.TOKEN',
    'steps.fix.prompt', 'steps.fix.systemPrompt', 'steps.gate.message', 'steps.gate.choices.options']) {
    assertIssue(issues, field, 'NUL');
  }
  const exported = JSON.stringify({ servicePipeline: 1, name: 'x', variables: {}, steps: [shell('a', 'echo "\0"')] });
  assertIssue(validationErrorOf(() => parsePipelineExport(exported)).issues, 'steps.a.command', 'NUL');
});

hostile('a huge list of broken steps reports the count and reads only the first 100', () => {
  const error = validationErrorOf(() => validatePipeline(pipelineInput({ steps: Array.from({ length: 100_000 }, () => null) }), context, now));
  assert.is(error.issues.length, 101);
  assertIssue(error.issues, 'steps', 'has 100000 steps');
});

validation.run();
steps.run();
references.run();
warnings.run();
templates.run();
sharing.run();
hostile.run();
