// The desktop IPC door with fakes: a fake ipcMain and a fake ipcRenderer wired together, and a fake
// context bridge, so each call goes renderer → preload → invoke → handler → api and back, as in
// Electron (which copies only an Error's message across the context bridge).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { FactoryApi, FactoryEventName } from '../../src/core/api';
import { factoryEventNames, methodNames, methods } from '../../src/core/api';
import { NotFoundError, ValidationError } from '../../src/core/errors';
import { eventChannel, forwardEvents, isTrustedFrame, refusedMessage, registerIpc, type FrameLike, type IpcEventLike, type IpcMainLike } from '../../src/desktop/ipc';
import { createPreloadApi, type IpcRendererLike } from '../../src/desktop/preload-api';
import { CallError, desktopApi } from '../../ui/call-error';

const appUrl = 'file:///opt/factory/dist/ui/index.html';

/** A top frame: its own `top`, no parent. */
function mainFrame(url: string): FrameLike {
  const frame: FrameLike = { url, parent: null };
  frame.top = frame;
  return frame;
}

function subFrame(url: string): FrameLike {
  const top = mainFrame(appUrl);
  return { url, top, parent: top };
}

/** A fake api: records calls, answers with `result:<name>`, or throws what `failures` says. */
function fakeApi() {
  const calls: { name: string; args: unknown[] }[] = [];
  const failures = new Map<string, unknown>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const api: Record<string, unknown> = { platform: 'linux' };
  for (const name of methodNames) {
    api[name] = async (...args: unknown[]) => {
      calls.push({ name, args });
      if (failures.has(name)) throw failures.get(name);
      return `result:${name}`;
    };
  }
  api.on = (event: string, callback: (payload: unknown) => void) => {
    if (!listeners.has(event)) listeners.set(event, new Set());
    listeners.get(event)!.add(callback);
    return () => listeners.get(event)!.delete(callback);
  };
  const emit = (event: FactoryEventName, payload: unknown) => {
    for (const callback of listeners.get(event) ?? []) callback(payload);
  };
  return { api: api as unknown as FactoryApi, calls, failures, listeners, emit };
}

/** ipcMain + ipcRenderer joined like Electron: invoke runs the handler with a fake event from `frame`. */
function wire(frame: () => FrameLike | null) {
  const handlers = new Map<string, (event: IpcEventLike, ...args: any[]) => unknown>();
  const rendererListeners = new Map<string, Set<(event: unknown, ...args: any[]) => void>>();
  const ipcMain: IpcMainLike = {
    handle(channel, listener) {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, listener);
    },
    removeHandler(channel) {
      handlers.delete(channel);
    },
  };
  const ipcRenderer: IpcRendererLike = {
    async invoke(channel, ...args) {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
      // Like Electron: the arguments are copied, and a rejection arrives wrapped.
      const copied = structuredClone(args);
      try {
        return structuredClone(await handler({ senderFrame: frame(), sender: { id: 1 } }, ...copied));
      } catch (error) {
        throw new Error(`Error invoking remote method '${channel}': ${String(error)}`);
      }
    },
    on(channel, listener) {
      if (!rendererListeners.has(channel)) rendererListeners.set(channel, new Set());
      rendererListeners.get(channel)!.add(listener);
    },
    removeListener(channel, listener) {
      rendererListeners.get(channel)?.delete(listener);
    },
  };
  const send = (channel: string, payload: unknown) => {
    for (const listener of [...(rendererListeners.get(channel) ?? [])]) listener({}, structuredClone(payload));
  };
  return { ipcMain, ipcRenderer, handlers, rendererListeners, send };
}

/**
 * What contextBridge does to the exposed functions' promises: a value is copied, and a rejection
 * with an Error arrives as a new Error with the message alone (custom properties are lost).
 */
function acrossContextBridge<Exposed extends object>(exposed: Exposed): Exposed {
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(exposed)) {
    copy[name] = typeof member !== 'function' || name === 'on' ? member : (...args: unknown[]) => (member as (...values: unknown[]) => Promise<unknown>)(...structuredClone(args)).then(
      (value) => structuredClone(value),
      (error: unknown) => {
        throw error instanceof Error ? new Error(error.message) : structuredClone(error);
      },
    );
  }
  return copy as Exposed;
}

function setup(frame: FrameLike | null = mainFrame(appUrl)) {
  const fake = fakeApi();
  const pair = wire(() => frame);
  const unregister = registerIpc(pair.ipcMain, fake.api, (event) => isTrustedFrame(event.senderFrame, appUrl));
  const renderer = desktopApi(acrossContextBridge(createPreloadApi(pair.ipcRenderer, 'linux')));
  return { ...fake, ...pair, unregister, renderer };
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a rejection');
}

const ipc = suite('desktop ipc');

ipc('registers factory:<method> for every method of the list, desktop-only ones included', () => {
  const { handlers } = setup();
  assert.equal([...handlers.keys()].sort(), methodNames.map((name) => `factory:${name}`).sort());
  assert.ok(handlers.has('factory:pickDirectory'));
  assert.ok(handlers.has('factory:resetRemoteToken'));
});

ipc('every method round-trips with its arguments and result', async () => {
  const { renderer, calls } = setup();
  for (const name of methodNames) {
    const args = Array.from({ length: methods[name].params }, (_, index) => ({ index, name }));
    const method = renderer[name] as (...values: unknown[]) => Promise<unknown>;
    assert.is(await method(...args), `result:${name}`, name);
    assert.equal(calls.at(-1), { name, args }, name);
  }
  assert.is(calls.length, methodNames.length);
});

ipc('null stands for an omitted argument and trailing undefined is not sent', async () => {
  const { renderer, calls } = setup();
  await renderer.retryRun('run_1', undefined);
  assert.equal(calls.at(-1), { name: 'retryRun', args: ['run_1'] });
  await renderer.approveStep('run_1', 'review', true, null as unknown as string, ['1']);
  assert.equal(calls.at(-1), { name: 'approveStep', args: ['run_1', 'review', true, undefined, ['1']] });
});

ipc('refuses more arguments than the method takes, without calling it', async () => {
  const { renderer, ipcRenderer, calls } = setup();
  const message = await rejection((renderer.getRun as (...values: unknown[]) => Promise<unknown>)('run_1', 'extra'));
  assert.is(message, 'getRun takes at most 1 argument, not 2');
  assert.equal(await ipcRenderer.invoke('factory:snapshot', 1), { ok: false, error: 'snapshot takes at most 0 arguments, not 1' }, 'a failure is answered, not thrown');
  assert.is(calls.length, 0);
});

ipc('a FactoryError arrives with its own message', async () => {
  const { renderer, failures } = setup();
  failures.set('getRun', new NotFoundError('Unknown run `run_x`'));
  assert.is(await rejection(renderer.getRun('run_x')), 'Unknown run `run_x`');
});

ipc("a refused input arrives in words, with each problem's field beside it, through the context bridge", async () => {
  const { renderer, failures, ipcRenderer } = setup();
  failures.set('saveSettings', new ValidationError([
    { field: 'remoteAccess.allowedHosts', message: 'The allowed host names must be a list of names' },
    { field: '', message: 'Nothing else can be saved now' },
  ], 'Settings not saved:'));
  const thrown = await renderer.saveSettings({}).then(() => undefined, (error: unknown) => error);
  assert.instance(thrown, CallError);
  assert.is((thrown as CallError).message, 'Settings not saved:\nThe allowed host names must be a list of names\nNothing else can be saved now');
  assert.equal((thrown as CallError).fields, [{ field: 'remoteAccess.allowedHosts', message: 'The allowed host names must be a list of names' }]);
  assert.equal(await ipcRenderer.invoke('factory:saveSettings', {}), {
    ok: false,
    error: 'Settings not saved:\nThe allowed host names must be a list of names\nNothing else can be saved now',
    fields: [{ field: 'remoteAccess.allowedHosts', message: 'The allowed host names must be a list of names' }],
  });
  failures.set('getRun', new NotFoundError('Unknown run `run_x`'));
  assert.equal(await ipcRenderer.invoke('factory:getRun', 'run_x'), { ok: false, error: 'Unknown run `run_x`' }, 'no fields for other errors');
});

ipc('any other error arrives as `<method> failed: <message>`', async () => {
  const { renderer, failures } = setup();
  failures.set('detectHarnesses', new TypeError('boom'));
  const original = console.error;
  const logged: unknown[][] = [];
  console.error = (...values: unknown[]) => logged.push(values);
  try {
    assert.is(await rejection(renderer.detectHarnesses()), 'detectHarnesses failed: boom');
  } finally {
    console.error = original;
  }
  assert.is(logged.length, 1);
  assert.ok(logged[0]!.some((value) => value instanceof TypeError));
});

for (const [label, frame] of [
  ['another URL', mainFrame('https://evil.example/index.html')],
  ['a look-alike URL', mainFrame(appUrl + '.evil/x.html')],
  ['a subframe of our page', subFrame(appUrl)],
  ['a destroyed frame', null],
] as const) {
  ipc(`refuses a request from ${label} and never calls the api`, async () => {
    const { renderer, calls } = setup(frame);
    assert.is(await rejection(renderer.snapshot()), refusedMessage);
    assert.is(await rejection(renderer.openExternal('https://example.com')), refusedMessage);
    assert.is(calls.length, 0);
  });
}

ipc('isTrustedFrame accepts our main frame with a query or hash', () => {
  assert.ok(isTrustedFrame(mainFrame(appUrl), appUrl));
  assert.ok(isTrustedFrame(mainFrame(appUrl + '#/runs/run_1'), appUrl));
  assert.ok(isTrustedFrame(mainFrame(appUrl + '?x=1'), appUrl));
  assert.ok(isTrustedFrame({ url: appUrl }, appUrl));
  assert.not.ok(isTrustedFrame({ url: appUrl, top: {} }, appUrl));
  assert.not.ok(isTrustedFrame(mainFrame('file:///opt/factory/dist/ui/other.html'), appUrl));
});

ipc('unregister removes every handler', async () => {
  const { unregister, handlers, renderer } = setup();
  unregister();
  assert.is(handlers.size, 0);
  assert.match(await rejection(renderer.snapshot()), 'No handler registered');
});

const events = suite('desktop ipc events');

events('forwardEvents sends every event, navigate included, on the one channel', () => {
  const { api, emit, listeners } = fakeApi();
  const sent: [string, unknown][] = [];
  const stop = forwardEvents(api, (channel, payload) => sent.push([channel, payload]));
  for (const event of factoryEventNames) emit(event, `payload:${event}`);
  assert.equal(sent, factoryEventNames.map((event) => [eventChannel, { event, payload: `payload:${event}` }]));
  stop();
  assert.ok([...listeners.values()].every((set) => set.size === 0));
  emit('run', 'late');
  assert.is(sent.length, factoryEventNames.length);
});

events('preload on() delivers payloads to the subscribers of that event only', () => {
  const { api, emit, renderer, send, rendererListeners } = setup();
  forwardEvents(api, send);
  const runs: unknown[] = [];
  const navigations: unknown[] = [];
  const logs: unknown[] = [];
  const offRun = renderer.on('run', (run) => runs.push(run));
  renderer.on('navigate', (path) => navigations.push(path));
  renderer.on('logs', (lines) => logs.push(lines));
  assert.is(rendererListeners.get(eventChannel)!.size, 1, 'one shared listener');

  emit('run', { id: 'run_1' });
  emit('navigate', '/runs/run_1');
  emit('inbox', { id: 'in_1' });
  assert.equal(runs, [{ id: 'run_1' }]);
  assert.equal(navigations, ['/runs/run_1']);
  assert.equal(logs, []);

  offRun();
  offRun();
  emit('run', { id: 'run_2' });
  emit('logs', [{ line: 'x' }]);
  assert.equal(runs, [{ id: 'run_1' }]);
  assert.equal(logs, [[{ line: 'x' }]]);
});

events('the shared listener goes when the last subscriber goes, and comes back', () => {
  const { api, emit, renderer, send, rendererListeners } = setup();
  forwardEvents(api, send);
  const seen: unknown[] = [];
  const offA = renderer.on('snapshot', (value) => seen.push(['a', value]));
  const offB = renderer.on('snapshot', (value) => seen.push(['b', value]));
  offA();
  assert.is(rendererListeners.get(eventChannel)!.size, 1);
  offB();
  assert.is(rendererListeners.get(eventChannel)!.size, 0);
  emit('snapshot', 1);
  assert.equal(seen, []);
  const offC = renderer.on('run-deleted', (id) => seen.push(['c', id]));
  emit('run-deleted', 'run_9');
  assert.equal(seen, [['c', 'run_9']]);
  offC();
  assert.is(rendererListeners.get(eventChannel)!.size, 0);
});

ipc.run();
events.run();

