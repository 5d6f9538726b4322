// What the window is told when a call fails: a bad pipeline's problems in words, without the field
// paths the engine keeps beside them (issue 22.12). The editor puts each at its field from
// checkPipeline, which answers with the paths.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { callFromRenderer } from '../../src/desktop/ipc';
import { unwrapInvokeError } from '../../src/desktop/preload-api';
import { startTestFactory, type TestFactory } from '../helpers/factory';

const errors = suite<{ factory: TestFactory }>('IPC errors');

errors.before.each(async (context) => {
  context.factory = await startTestFactory();
});
errors.after.each(async (context) => {
  await context.factory.close();
});

errors('a refused pipeline reaches the renderer in words, without steps.#2.id:, and checkPipeline keeps the field', async ({ factory }) => {
  const bad = { projectId: factory.projectId, name: 'x', variables: {}, steps: [{ id: 'ok', name: 'Ok', kind: 'shell', command: 'true' }, { id: 'Bad Id!', name: 'B', kind: 'shell', command: '' }] };
  const thrown = await callFromRenderer(factory.api, 'savePipeline', [bad]).then(() => undefined, (error: Error) => error);
  assert.ok(thrown, 'the save was refused');
  // Electron carries only the message, wrapped; the preload takes the wrapping off again.
  const channel = 'factory:savePipeline';
  const shown = unwrapInvokeError(channel, new Error(`Error invoking remote method '${channel}': ${String(thrown)}`)).message;
  assert.equal(shown.split('\n'), [
    'Step 2: the id `Bad Id!` may use only a–z, 0–9, - and _, starting with a letter (at most 40)',
    'Step 2: the command is empty: a shell step runs a command',
  ]);
  assert.not.match(shown, /steps\.|#2/, 'no field path');
  const check = await factory.api.checkPipeline(bad as never);
  assert.equal(check.problems.map((problem) => problem.field), ['steps.#2.id', 'steps.#2.command'], 'the editor still finds each field');
});

errors('forms that read `field: message` keep it: a refused setting names its field', async ({ factory }) => {
  const thrown = await callFromRenderer(factory.api, 'saveSettings', [{ theme: 'purple' }]).then(() => undefined, (error: Error) => error);
  assert.match(String(thrown?.message), /^theme: The theme must be system, light or dark/m);
});

errors.run();
