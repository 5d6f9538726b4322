// What a refusal says (issue 22.12): its message is words only, one problem a line, each naming its
// field in words; the field paths travel beside it (`issues`, and `fields` on every door).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError, fieldProblems, testFailure, withFields } from '../../src/core/errors';
import { validateRunFilter, validateStartRequest } from '../../src/core/runs';
import { defaultSettings, mergeSettings, validateProject } from '../../src/core/settings';
import { validateConnection, validateTrigger } from '../../src/core/trigger-config';
import { validateChannel } from '../../src/channels/channels';

const errors = suite('validation errors');

function refusal(action: () => unknown): ValidationError {
  try {
    action();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  assert.unreachable('the input was accepted');
  throw new Error('unreachable');
}

errors('the message is the heading and each problem in words; the paths stay in issues', () => {
  const issues = [{ field: 'remoteAccess.allowedHosts', message: 'The allowed host names must be a list' }, { field: '', message: 'Something else is wrong' }];
  const error = new ValidationError(issues, 'Settings not saved:');
  assert.is(error.message, 'Settings not saved:\nThe allowed host names must be a list\nSomething else is wrong');
  assert.is(error.details, 'The allowed host names must be a list\nSomething else is wrong');
  assert.equal(error.issues, issues);
  assert.equal(fieldProblems(error), [issues[0]], 'only problems that name a field are carried as fields');
  assert.equal(fieldProblems(new Error('x')), []);
});

errors('withFields adds fields only when there are some; testFailure answers the problems without the heading', () => {
  const error = new ValidationError([{ field: 'filter.repo', message: 'The repository must be owner/name' }], 'Trigger not saved:');
  assert.equal(withFields({ error: error.message }, error), { error: 'Trigger not saved:\nThe repository must be owner/name', fields: [{ field: 'filter.repo', message: 'The repository must be owner/name' }] });
  assert.equal(withFields({ error: 'x' }, new ValidationError('plain words')), { error: 'x' }, 'no empty fields list');
  assert.equal(testFailure(error), { ok: false, error: 'The repository must be owner/name', fields: [{ field: 'filter.repo', message: 'The repository must be owner/name' }] });
  assert.equal(testFailure(new Error('The key was refused')), { ok: false, error: 'The key was refused' });
});

/** Each problem names its field in words: it starts with a capital (never a path or a bare "must be"), and no line holds a path. */
function assertInWords(error: ValidationError, expectedFields: string[]): void {
  const fields = error.issues.map((issue) => issue.field);
  for (const field of expectedFields) assert.ok(fields.includes(field), `a problem at ${field}; got ${JSON.stringify(fields)}`);
  for (const issue of error.issues) {
    assert.match(issue.message, /^[A-Z“`]/, `${issue.field} says its field in words: ${JSON.stringify(issue.message)}`);
    assert.not.ok(issue.message.startsWith(`${issue.field}:`), issue.message);
  }
  for (const issue of error.issues.filter((each) => each.field.includes('.'))) assert.not.match(error.message, `${issue.field}:`, 'no path prefix');
}

errors('settings, projects, runs and run filters name every field in words', () => {
  assertInWords(refusal(() => mergeSettings(defaultSettings, {
    theme: 'purple', maxParallelRuns: 0, worktreeRetentionDays: 'x', defaultHarnessId: 3,
    webhookServer: { enabled: 'yes', host: 'a b', port: 70000 }, remoteAccess: { allowedHosts: 'factory.example.com' },
  })), ['theme', 'maxParallelRuns', 'worktreeRetentionDays', 'defaultHarnessId', 'webhookServer.enabled', 'webhookServer.host', 'webhookServer.port', 'remoteAccess.allowedHosts']);
  assertInWords(refusal(() => mergeSettings(defaultSettings, { remoteAccess: 5 })), ['remoteAccess']);
  assertInWords(refusal(() => validateProject({ id: 'x', name: 7, path: 'relative', worktrees: 'no', setupCommand: 3 })), ['id', 'name', 'path', 'worktrees', 'setupCommand']);
  assertInWords(refusal(() => validateStartRequest({ pipelineId: '', issue: { title: ' ', url: 5, labels: [1], raw: [] }, variables: { 'a b': 'x', c: 1 } })),
    ['pipelineId', 'issue.title', 'issue.url', 'issue.labels', 'issue.raw', 'variables.a b', 'variables.c']);
  assertInWords(refusal(() => validateRunFilter({ status: 'done', pipelineId: 3, search: 4, limit: 0 })), ['status', 'pipelineId', 'search', 'limit']);
});

errors('triggers and accounts name every field in words', () => {
  const context = { pipelineIds: ['pl_1'], connectionIds: ['con_1'], availableKinds: ['webhook', 'github', 'github-review'] as const };
  assertInWords(refusal(() => validateTrigger({
    id: 'x', name: 5, kind: 'github', enabled: 'on', pipelineId: 'pl_none', connectionId: 'con_none', webhookSecret: 'a\nb', pollIntervalSec: 1,
    filter: { repo: 5, labels: 'x' }, writeBack: { comment: true, labels: { started: 5 } }, variables: { 'no good': 'x' },
  }, context)), ['id', 'name', 'enabled', 'pipelineId', 'connectionId', 'webhookSecret', 'pollIntervalSec', 'filter.repo', 'filter.labels', 'writeBack.labels.started', 'variables.no good']);
  assertInWords(refusal(() => validateTrigger({ name: 't', kind: 'github-review', pipelineId: 'pl_1', connectionId: 'con_1', filter: {}, maxFollowUps: -1 }, context)), ['filter.repo', 'maxFollowUps']);
  assertInWords(refusal(() => validateTrigger({ name: 't', kind: 'nope', pipelineId: 'pl_1' }, context)), ['kind']);
  assertInWords(refusal(() => validateConnection({ kind: 'github', id: 'x', name: 5, baseUrl: 'ftp://x', email: 'no', token: 'two words' }, ['github'])), ['id', 'name', 'baseUrl', 'email', 'token']);
  assertInWords(refusal(() => validateConnection({ kind: 'nope' }, ['github'])), ['kind']);
});

errors('channels name every field in words', () => {
  assertInWords(refusal(() => validateChannel({ kind: 'telegram', name: ' ', url: 5, token: 'a b', enabled: 'yes', events: ['run.done'], pipelineIds: [3] }, undefined, 'Channel not saved:')),
    ['name', 'url', 'token', 'enabled', 'events.0', 'pipelineIds']);
  assertInWords(refusal(() => validateChannel({ kind: 'telegram', name: 't', events: 'x' }, undefined, 'Channel not saved:')), ['token', 'chatId', 'events']);
  assertInWords(refusal(() => validateChannel({ kind: 'ntfy', name: 'n', url: 'https://ntfy.sh/', events: [] }, undefined, 'Channel not saved:')), ['url']);
  assertInWords(refusal(() => validateChannel({ kind: 'pager', name: 'n', events: [] }, undefined, 'Channel not saved:')), ['kind']);
});

errors.run();
