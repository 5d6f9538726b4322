// Checking what startRun is given: NUL characters and nesting deeper than a webhook body may be.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError, type ValidationIssue } from '../../src/core/errors';
import { validateStartRequest } from '../../src/core/runs';

const pipelineId = 'pl_0123456789abcdef';

function refusal(input: unknown): ValidationError {
  try {
    validateStartRequest(input);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  assert.unreachable('the request was accepted');
  throw new Error('unreachable');
}

function assertIssue(issues: ValidationIssue[], field: string, fragment: string): void {
  assert.ok(issues.some((issue) => issue.field === field && issue.message.includes(fragment)),
    `no issue at ${field} with ${JSON.stringify(fragment)}; got ${JSON.stringify(issues)}`);
}

/** An object nested `depth` levels deep (the top one is level 1), built without recursion. */
function nested(depth: number): Record<string, unknown> {
  const top: Record<string, unknown> = {};
  let current = top;
  for (let level = 1; level < depth; level += 1) {
    const child: Record<string, unknown> = {};
    current.a = child;
    current = child;
  }
  return top;
}

const start = suite('validateStartRequest');

start('refuses NUL in every issue field and variable, naming the field', () => {
  const issues = refusal({
    pipelineId,
    issue: { title: 'a\0b', key: 'K\0', description: '\0', url: 'http://x/\0', priority: 'p\0', source: 's\0', labels: ['ok', 'b\0d'], raw: { deep: { list: ['ok', 'x\0y'] } } },
    variables: { branch: 'main\0' },
  }).issues;
  for (const field of ['issue.title', 'issue.key', 'issue.description', 'issue.url', 'issue.priority', 'issue.source', 'issue.labels', 'issue.raw.deep.list.1', 'variables.branch']) {
    assertIssue(issues, field, 'NUL');
  }
  assertIssue(refusal({ pipelineId, issue: { title: 'ok', raw: { deep: { 'k\0': 1 } } } }).issues, 'issue.raw.deep', 'NUL');
});

start('refuses an issue.raw nested deeper than a webhook body may be, without recursion', () => {
  // A recursive reader overflows the stack at 1,000,000 levels (a RangeError, not this refusal).
  for (const depth of [101, 100_000, 1_000_000]) {
    const error = refusal({ pipelineId, issue: { title: 'Deep', raw: nested(depth) } });
    assertIssue(error.issues, 'issue.raw', 'nested deeper than 100 levels');
  }
  const list: unknown[] = [];
  let current = list;
  for (let level = 1; level < 200_000; level += 1) {
    const child: unknown[] = [];
    current.push(child);
    current = child;
  }
  assertIssue(refusal({ pipelineId, issue: { title: 'Deep', raw: { list } } }).issues, 'issue.raw', 'nested deeper than 100 levels');
});

start('describes a deep value it refuses by its kind, never by printing it', () => {
  const deepList: unknown[] = [];
  let current = deepList;
  for (let level = 1; level < 200_000; level += 1) {
    const child: unknown[] = [];
    current.push(child);
    current = child;
  }
  assert.match(refusal(deepList).message, 'not a list');
  assertIssue(refusal({ pipelineId, issue: deepList }).issues, 'issue', 'not a list');
  assertIssue(refusal({ pipelineId, issue: { title: 't', raw: deepList } }).issues, 'issue.raw', 'not a list');
  assertIssue(refusal({ pipelineId, issue: { title: 't', labels: [deepList] } }).issues, 'issue.labels', 'not a list');
  assertIssue(refusal({ pipelineId, issue: { title: 't', key: deepList } }).issues, 'issue.key', 'not a list');
  assertIssue(refusal({ pipelineId, variables: { a: deepList } }).issues, 'variables.a', 'not a list');
});

start('names each field in words, and an empty value in words too', () => {
  const error = refusal({ pipelineId: '', issue: { title: ' ', url: 5 }, variables: { 'my var': 'x', branch: '' } });
  assertIssue(error.issues, 'pipelineId', 'Choose the pipeline to run');
  assertIssue(error.issues, 'issue.title', 'The issue title is empty: an issue needs a title');
  assert.not.match(error.message, /issue\.|variables\.|pipelineId/, 'the message is words without the field paths');
  assertIssue(error.issues, 'issue.url', 'The issue URL must be text, not `5`');
  assertIssue(error.issues, 'variables.my var', 'The variable `my var` is not a valid name');
  assert.not.match(error.message, '``');
});

start('accepts an issue.raw as deep as a webhook body may be', () => {
  const request = validateStartRequest({ pipelineId, issue: { title: 'Deep', raw: nested(100) } });
  assert.ok(request.issue?.raw);
  assert.is(validateStartRequest({ pipelineId, issue: { title: 'ok', labels: ['a'] }, variables: { a: 'b' } }).variables.a, 'b');
});

start.run();
