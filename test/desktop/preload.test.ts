// What the preload puts on `window.factory`, seen through a fake contextBridge.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { methodNames } from '../../src/core/api';
import { createPreloadApi, unwrapInvokeError, type IpcRendererLike } from '../../src/desktop/preload-api';

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

preload.run();
