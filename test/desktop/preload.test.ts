// What the preload puts on `window.factory`, seen through a fake contextBridge.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { methodNames } from '../../src/core/api';
import type { DesktopBridge } from '../../src/core/api';
import { createPreloadApi, unwrapInvokeError, type IpcRendererLike } from '../../src/desktop/preload-api';
import { CallError, desktopApi, fieldsOf } from '../../ui/call-error';

function fakeIpcRenderer() {
  const invoked: { channel: string; args: unknown[] }[] = [];
  const ipcRenderer: IpcRendererLike = {
    async invoke(channel, ...args) {
      invoked.push({ channel, args });
      return channel;
    },
    on() {},
    removeListener() {},
  };
  return { ipcRenderer, invoked };
}

/** Exposes like preload.ts does, through a contextBridge that captures the value. */
function expose(platform: 'darwin' | 'linux' = 'linux') {
  const exposed = new Map<string, unknown>();
  const contextBridge = { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) };
  const fake = fakeIpcRenderer();
  contextBridge.exposeInMainWorld('factory', createPreloadApi(fake.ipcRenderer, platform));
  return { exposed, ...fake, factory: exposed.get('factory') as Record<string, unknown> };
}

const preload = suite('desktop preload');

preload('exposes exactly window.factory', () => {
  const { exposed } = expose();
  assert.equal([...exposed.keys()], ['factory']);
});

preload('has exactly the method names, platform and on', () => {
  const { factory } = expose();
  assert.equal(Object.keys(factory).sort(), [...methodNames, 'platform', 'on'].sort());
  for (const key of ['ipcRenderer', 'invoke', 'send', 'sendSync', 'removeListener']) assert.not.ok(key in factory, key);
});

preload('is a plain object of functions and the platform string', () => {
  const { factory } = expose('darwin');
  assert.is(Object.getPrototypeOf(factory), Object.prototype);
  assert.is(factory.platform, 'darwin');
  for (const [key, value] of Object.entries(factory)) {
    if (key !== 'platform') assert.type(value, 'function', key);
  }
  assert.is(expose('linux').factory.platform, 'linux');
});

preload('each method invokes its own channel, trailing undefined trimmed', async () => {
  const { factory, invoked } = expose();
  for (const name of methodNames) {
    const result = await (factory[name] as (...values: unknown[]) => Promise<unknown>)('a', undefined, 'b', undefined, undefined);
    assert.is(result, `factory:${name}`);
    assert.equal(invoked.at(-1), { channel: `factory:${name}`, args: ['a', undefined, 'b'] });
  }
  await (factory.snapshot as () => Promise<unknown>)();
  assert.equal(invoked.at(-1), { channel: 'factory:snapshot', args: [] });
});

preload('unwraps Electron\'s invoke error prefix to the plain message', () => {
  const channel = 'factory:getRun';
  assert.is(unwrapInvokeError(channel, new Error(`Error invoking remote method '${channel}': Error: Unknown run \`run_x\``)).message, 'Unknown run `run_x`');
  assert.is(unwrapInvokeError(channel, new Error('something else')).message, 'something else');
  assert.is(unwrapInvokeError(channel, new Error(`Error invoking remote method '${channel}': line 1\nline 2`)).message, 'line 1\nline 2');
});

preload('a method resolves with the main process answer as it came, a refusal\'s fields included', async () => {
  const refusal = { ok: false, error: 'Trigger not saved:\nThe repository filter must be text, not `5`', fields: [{ field: 'filter.repo', message: 'The repository filter must be text, not `5`' }] };
  const ipcRenderer: IpcRendererLike = { invoke: async () => refusal, on() {}, removeListener() {} };
  assert.equal(await createPreloadApi(ipcRenderer, 'linux').saveTrigger({} as never), refusal);
});

preload('a rejected invoke (a refused window, no handler) resolves as a failure in plain words, never rejects', async () => {
  const ipcRenderer: IpcRendererLike = {
    invoke: async (channel) => {
      throw new Error(`Error invoking remote method '${channel}': Error: Refused: this request did not come from the Factory window`);
    },
    on() {},
    removeListener() {},
  };
  assert.equal(await createPreloadApi(ipcRenderer, 'linux').snapshot(), { ok: false, error: 'Refused: this request did not come from the Factory window' });
});

preload('the renderer turns an answer back into the value, or a CallError with the words and the fields', async () => {
  const answers: unknown[] = [
    { ok: true, value: { id: 'trg_1' } },
    { ok: false, error: 'Trigger not saved:\nThe repository filter must be text', fields: [{ field: 'filter.repo', message: 'The repository filter must be text' }, { field: '', message: 'dropped' }, 'junk'] },
    { ok: false, error: 'Unknown run `run_x`' },
    undefined,
  ];
  const on = () => () => undefined;
  const bridge = { platform: 'linux', on, saveTrigger: async () => answers.shift() } as unknown as DesktopBridge;
  const api = desktopApi(bridge);
  assert.is(api.platform, 'linux');
  assert.is(api.on, on);
  assert.equal(await api.saveTrigger({} as never), { id: 'trg_1' });
  const refused = await api.saveTrigger({} as never).then(() => undefined, (error: unknown) => error);
  assert.instance(refused, CallError);
  assert.is((refused as Error).message, 'Trigger not saved:\nThe repository filter must be text');
  assert.equal(fieldsOf(refused), [{ field: 'filter.repo', message: 'The repository filter must be text' }], 'only well-formed fields with a path');
  const other = await api.saveTrigger({} as never).then(() => undefined, (error: unknown) => error);
  assert.equal([(other as Error).message, fieldsOf(other)], ['Unknown run `run_x`', []]);
  const unreadable = await api.saveTrigger({} as never).then(() => undefined, (error: unknown) => error);
  assert.match((unreadable as Error).message, /^saveTrigger failed/);
  assert.equal(fieldsOf(new Error('plain')), []);
});

preload.run();
