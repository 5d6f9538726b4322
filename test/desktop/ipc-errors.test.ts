// What the window is told when a call fails (issue 22.12): the problems in words, without field
// paths, and the path of each problem beside them, in the answer the main process sends (a plain
// object, because Electron's IPC and context bridge keep only an Error's message).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { MethodAnswer, MethodName } from '../../src/core/api';
import { callFromRenderer } from '../../src/desktop/ipc';
import { startTestFactory, type TestFactory } from '../helpers/factory';

const errors = suite<{ factory: TestFactory }>('IPC errors');

errors.before.each(async (context) => {
  context.factory = await startTestFactory();
});
errors.after.each(async (context) => {
  await context.factory.close();
});

/** The failed answer of `name` called from the window, as it crosses IPC (a structured clone). */
async function refused(factory: TestFactory, name: MethodName, args: unknown[]): Promise<Extract<MethodAnswer, { ok: false }>> {
  const answer = structuredClone(await callFromRenderer(factory.api, name, args));
  if (answer.ok) throw new Error(`${name} was accepted`);
  return answer;
}

/** No line of the words starts with a field path such as `remoteAccess.allowedHosts:` or `name:`. */
function assertWordsOnly(error: string): void {
  for (const line of error.split('\n')) assert.not.match(line, /^[a-z][\w.#-]*(?: [\w.#-]+)?: /, `a path before the words: ${line}`);
}

errors("a refused pipeline reaches the window in words, the editor's field paths beside them", async ({ factory }) => {
  const bad = { projectId: factory.projectId, name: 'x', variables: {}, steps: [{ id: 'ok', name: 'Ok', kind: 'shell', command: 'true' }, { id: 'Bad Id!', name: 'B', kind: 'shell', command: '' }] };
  const answer = await refused(factory, 'savePipeline', [bad]);
  assert.equal(answer.error.split('\n'), [
    'Step 2: the id `Bad Id!` may use only a–z, 0–9, - and _, starting with a letter (at most 40)',
    'Step 2: the command is empty: a shell step runs a command',
  ]);
  assert.not.match(answer.error, /steps\.|#2/, 'no field path');
  assert.equal(answer.fields?.map((problem) => problem.field), ['steps.#2.id', 'steps.#2.command']);
});

errors('a refused settings save says each problem in words, and carries remoteAccess.allowedHosts and theme beside them', async ({ factory }) => {
  const answer = await refused(factory, 'saveSettings', [{ theme: 'purple', remoteAccess: { allowedHosts: 'factory.example.com' } }]);
  assert.equal(answer.error.split('\n'), [
    'Settings not saved:',
    'The allowed host names must be a list of names such as factory.example.com, not `factory.example.com`',
    'The theme must be system, light or dark, not `purple`',
  ]);
  assertWordsOnly(answer.error);
  assert.not.match(answer.error, 'remoteAccess');
  assert.equal(answer.fields, [
    { field: 'remoteAccess.allowedHosts', message: 'The allowed host names must be a list of names such as factory.example.com, not `factory.example.com`' },
    { field: 'theme', message: 'The theme must be system, light or dark, not `purple`' },
  ]);
});

errors('a refused trigger says each problem in words, and carries filter.repo and the rest beside them', async ({ factory }) => {
  const answer = await refused(factory, 'saveTrigger', [{ name: 'Bugs', kind: 'github', pipelineId: 'pl_none', filter: { repo: 5 }, variables: { 'two words': 'x' } }]);
  assertWordsOnly(answer.error);
  assert.not.match(answer.error, /filter\.repo|pipelineId|connectionId|variables\./);
  assert.match(answer.error, /^Trigger not saved:\n/);
  assert.match(answer.error, /^The repository filter must be text, not `5`$/m);
  assert.equal(answer.fields?.map((problem) => problem.field), ['pipelineId', 'connectionId', 'filter.repo', 'variables.two words']);
  assert.ok(answer.fields?.every((problem) => answer.error.split('\n').includes(problem.message)), 'each carried problem is a line of the words');
});

errors('a refused project says each problem in words, and carries name and path beside them', async ({ factory }) => {
  const answer = await refused(factory, 'saveProject', [{ name: ' ', path: 'relative/folder' }]);
  assert.equal(answer, {
    ok: false,
    error: 'Project not saved:\nThe name is empty: a project needs a name\nThe folder must be an absolute path such as /home/me/app, not `relative/folder`',
    fields: [
      { field: 'name', message: 'The name is empty: a project needs a name' },
      { field: 'path', message: 'The folder must be an absolute path such as /home/me/app, not `relative/folder`' },
    ],
  });
  const missing = await refused(factory, 'saveProject', [{ name: 'Gone', path: '/no/such/folder/here' }]);
  assert.equal(missing.fields, [{ field: 'path', message: 'The folder `/no/such/folder/here` does not exist: choose an existing folder' }]);
  assertWordsOnly(missing.error);
});

errors.run();
