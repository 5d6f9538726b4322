// The desktop functions, the tray menu and the notifications, over fake ports (no Electron binary).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { FactoryEventName, FactoryEvents, Run, Snapshot } from '../../src/core/api';
import { createDesktopFunctions, findOnPath, type DesktopPorts } from '../../src/desktop/desktop-functions';
import { createNotifier, notifyInboxEvents, type NotificationLike } from '../../src/desktop/notifications';
import { buildTrayMenu, type TrayState } from '../../src/desktop/tray';
import { rejects } from '../helpers/assert';

interface Spawned {
  command: string;
  args: string[];
  options: unknown;
  unrefed: boolean;
}

function fakePorts(options: { onPath?: string[]; dialog?: { canceled: boolean; filePaths: string[] }; openPathError?: string } = {}) {
  const calls = { external: [] as string[], paths: [] as string[], spawned: [] as Spawned[], dialogs: [] as unknown[] };
  const ports: DesktopPorts = {
    shell: {
      openExternal: async (url) => void calls.external.push(url),
      openPath: async (path) => {
        calls.paths.push(path);
        return options.openPathError ?? '';
      },
    },
    dialog: {
      showOpenDialog: async (dialogOptions) => {
        calls.dialogs.push(dialogOptions);
        return options.dialog ?? { canceled: false, filePaths: ['/home/me/project'] };
      },
    },
    spawn: (command, args, spawnOptions) => {
      const record: Spawned = { command, args, options: spawnOptions, unrefed: false };
      calls.spawned.push(record);
      return { unref: () => void (record.unrefed = true) };
    },
    which: (command) => ((options.onPath ?? []).includes(command) ? `/usr/bin/${command}` : undefined),
  };
  const remote = {
    resets: 0,
    pairing: () => ({ url: 'http://127.0.0.1:7718/pair?t=abc', token: 'abc', qrSvg: '<svg/>' }),
    resetToken: async () => void remote.resets++,
  };
  return { functions: createDesktopFunctions(ports, remote), calls, remote };
}

const desktop = suite('desktop functions');

desktop('openExternal refuses every scheme but http and https, naming it', async () => {
  const { functions, calls } = fakePorts();
  await rejects(functions.openExternal('javascript:alert(1)'), /scheme `javascript`/);
  await rejects(functions.openExternal('file:///etc/passwd'), /scheme `file`/);
  await rejects(functions.openExternal('smb://x'), /scheme `smb`/);
  await rejects(functions.openExternal('data:text/html,x'), /scheme `data`/);
  await rejects(functions.openExternal('not a url'), /not a valid URL/);
  await rejects(functions.openExternal(42 as unknown as string), /^The link must be a non-empty text$/);
  assert.equal(calls.external, []);
  await functions.openExternal('https://example.com');
  await functions.openExternal('http://localhost:3000/x?y=1');
  assert.equal(calls.external, ['https://example.com/', 'http://localhost:3000/x?y=1']);
});

desktop('openPath takes absolute paths only and turns the shell error into an Error', async () => {
  const { functions, calls } = fakePorts();
  await rejects(functions.openPath('relative/folder'), /not an absolute path/);
  await rejects(functions.openPath('/tmp/a\0b'), /NUL/);
  await rejects(functions.openPath(undefined as unknown as string), /^The path must be a non-empty text$/);
  await functions.openPath('/home/me/project');
  assert.equal(calls.paths, ['/home/me/project']);
  const failing = fakePorts({ openPathError: 'Failed to open path' });
  await rejects(failing.functions.openPath('/missing'), /Could not open `\/missing`: Failed to open path/);
});

desktop('openInEditor spawns code with the path as its only argument, without a shell', async () => {
  const { functions, calls } = fakePorts({ onPath: ['code', 'cursor'] });
  await functions.openInEditor('/home/me/my project; rm -rf ~');
  assert.equal(calls.spawned.length, 1);
  const [spawned] = calls.spawned;
  assert.is(spawned!.command, '/usr/bin/code');
  assert.equal(spawned!.args, ['/home/me/my project; rm -rf ~']);
  assert.equal(spawned!.options, { shell: false, detached: true, stdio: 'ignore' });
  assert.ok(spawned!.unrefed);
  assert.equal(calls.paths, []);
});

desktop('openInEditor tries cursor next, then falls back to the file manager', async () => {
  const withCursor = fakePorts({ onPath: ['cursor'] });
  await withCursor.functions.openInEditor('/srv/work');
  assert.equal(withCursor.calls.spawned.map((spawned) => [spawned.command, spawned.args]), [['/usr/bin/cursor', ['/srv/work']]]);
  const withNone = fakePorts();
  await withNone.functions.openInEditor('/srv/work');
  assert.equal(withNone.calls.spawned, []);
  assert.equal(withNone.calls.paths, ['/srv/work']);
  await rejects(withNone.functions.openInEditor('srv/work'), /not an absolute path/);
});

desktop('pickDirectory offers to create folders and returns null when cancelled', async () => {
  const picked = fakePorts();
  assert.is(await picked.functions.pickDirectory(), '/home/me/project');
  assert.equal((picked.calls.dialogs[0] as { properties: string[] }).properties, ['openDirectory', 'createDirectory']);
  const cancelled = fakePorts({ dialog: { canceled: true, filePaths: [] } });
  assert.is(await cancelled.functions.pickDirectory(), null);
});

desktop('remotePairing and resetRemoteToken go to remote access', async () => {
  const { functions, remote } = fakePorts();
  assert.equal(await functions.remotePairing(), { url: 'http://127.0.0.1:7718/pair?t=abc', token: 'abc', qrSvg: '<svg/>' });
  await functions.resetRemoteToken();
  assert.is(remote.resets, 1);
});

desktop('findOnPath returns the first executable in an absolute PATH folder', async () => {
  const executables = new Set(['/opt/b/code', '/usr/bin/code']);
  const found = await findOnPath('code', 'relative:/opt/a:/opt/b/:/usr/bin', async (path) => executables.has(path));
  assert.is(found, '/opt/b/code');
  assert.is(await findOnPath('cursor', '/opt/a', async () => false), undefined);
});

function run(id: string, status: Run['status'], extra: Partial<Run> = {}): Run {
  return { id, pipelineId: 'pl_1', pipelineName: 'Fix bugs', projectId: 'pr_1', variables: {}, status, createdAt: 1, steps: [], ...extra };
}

function trayState(runs: Run[], webhooksOn = true): TrayState {
  return { runs, settings: { webhookServer: { enabled: webhooksOn, host: '127.0.0.1', port: 7717 }, remoteAccess: { enabled: false, host: '127.0.0.1', port: 7718 }, maxParallelRuns: 2, worktreeRetentionDays: 7 } };
}

type Item = { label?: string; type?: string; enabled?: boolean; submenu?: Item[]; click?: (...args: any[]) => void };

const tray = suite('tray menu');

tray('lists the runs waiting for approval; a click navigates to the run', () => {
  const navigated: string[] = [];
  const actions = { open: () => undefined, navigate: (path: string) => navigated.push(path), setTriggersPaused: () => undefined, quit: () => undefined };
  const menu = buildTrayMenu(trayState([
    run('run_a', 'waiting', { issue: { title: 'Login is broken' } as Run['issue'], createdAt: 2 }),
    run('run_b', 'running'),
    run('run_c', 'waiting', { createdAt: 1 }),
    run('run_d', 'succeeded'),
  ]), actions) as Item[];
  const labels = menu.map((item) => item.label ?? item.type);
  assert.equal(labels, ['Open Factory', 'separator', 'Waiting for approval (2)', 'separator', 'Pause triggers', 'separator', 'Quit']);
  const waiting = menu[2]!.submenu!;
  assert.equal(waiting.map((item) => item.label), ['Fix bugs', 'Login is broken']);
  waiting[1]!.click!();
  waiting[0]!.click!();
  assert.equal(navigated, ['#/runs/run_a', '#/runs/run_c']);
});

tray('pause and resume switch the webhook server; nothing waiting shows a disabled line', () => {
  const paused: boolean[] = [];
  let quits = 0;
  const actions = { open: () => undefined, navigate: () => undefined, setTriggersPaused: (value: boolean) => paused.push(value), quit: () => void quits++ };
  const running = buildTrayMenu(trayState([]), actions) as Item[];
  assert.equal(running[2]!.submenu, [{ label: 'No runs waiting', enabled: false }]);
  running.find((item) => item.label === 'Pause triggers')!.click!();
  const stopped = buildTrayMenu(trayState([], false), actions) as Item[];
  stopped.find((item) => item.label === 'Resume triggers')!.click!();
  stopped.find((item) => item.label === 'Quit')!.click!();
  assert.equal(paused, [true, false]);
  assert.is(quits, 1);
});

const notifications = suite('notifications');

function fakeApi(channels: Snapshot['channels'] = []) {
  const listeners = new Map<string, ((payload: any) => void)[]>();
  return {
    on<E extends FactoryEventName>(event: E, callback: (payload: FactoryEvents[E]) => void) {
      listeners.set(event, [...(listeners.get(event) ?? []), callback as (payload: any) => void]);
      return () => undefined;
    },
    snapshot: async () => ({ channels }) as Snapshot,
    emit(event: FactoryEventName, payload: unknown) {
      for (const listener of listeners.get(event) ?? []) listener(payload);
    },
  };
}

function fakeNotifications(clock?: { now: number; timers: { at: number; callback: () => void }[] }) {
  const shown: { title: string; body: string; click: () => void }[] = [];
  const calls = { focused: 0, navigated: [] as string[] };
  class FakeNotification implements NotificationLike {
    private clickListener = () => undefined as void;
    constructor(readonly options: { title: string; body: string }) {}
    on(event: 'click' | 'close', listener: () => void) {
      if (event === 'click') this.clickListener = listener;
      return this;
    }
    show() {
      shown.push({ ...this.options, click: () => this.clickListener() });
    }
  }
  const notifier = createNotifier({
    NotificationClass: FakeNotification, isSupported: () => true, focusWindow: () => void calls.focused++, navigate: (path) => void calls.navigated.push(path),
    ...(clock ? { now: () => clock.now, setTimer: (callback: () => void, ms: number) => void clock.timers.push({ at: clock.now + ms, callback }) } : {}),
  });
  return { notifier, shown, calls };
}

notifications('waiting, succeeded and failed runs notify; a click focuses the window at the run', async () => {
  const { notifier, shown, calls } = fakeNotifications();
  const api = fakeApi();
  notifyInboxEvents(api, notifier.show);
  await new Promise((resolve) => setTimeout(resolve, 0));
  api.emit('inbox', { id: 'in_1', at: 1, kind: 'run.waiting', title: 'Approval needed', body: 'Fix bugs waits', runId: 'run_1', read: false });
  api.emit('inbox', { id: 'in_2', at: 1, kind: 'step.stalled', title: 'Stuck', runId: 'run_1', read: false });
  api.emit('inbox', { id: 'in_3', at: 1, kind: 'run.failed', title: 'Run failed', runId: 'run_2', read: false });
  assert.equal(shown.map(({ title, body }) => [title, body]), [['Approval needed', 'Fix bugs waits'], ['Run failed', '']]);
  shown[0]!.click();
  assert.is(calls.focused, 1);
  assert.equal(calls.navigated, ['#/runs/run_1']);
});

notifications('an enabled desktop channel takes over, so nothing shows twice', async () => {
  const { notifier, shown } = fakeNotifications();
  const api = fakeApi([{ id: 'ch_1', kind: 'desktop', name: 'Desktop', enabled: true, events: ['run.failed'], hasToken: false } as Snapshot['channels'][number]]);
  notifyInboxEvents(api, notifier.show);
  await new Promise((resolve) => setTimeout(resolve, 0));
  api.emit('inbox', { id: 'in_1', at: 1, kind: 'run.failed', title: 'Run failed', runId: 'run_2', read: false });
  assert.equal(shown, []);
  await notifier.desktopNotify({ title: 'Run failed', text: 'Pipeline: Fix bugs', runId: 'run_2' });
  assert.equal(shown.map(({ title, body }) => [title, body]), [['Run failed', 'Pipeline: Fix bugs']]);
});

notifications('a burst shows three notifications, then one summary that opens the inbox; later ones show again', async () => {
  const clock = { now: 1_000_000, timers: [] as { at: number; callback: () => void }[] };
  const { notifier, shown, calls } = fakeNotifications(clock);
  const advance = (ms: number) => {
    clock.now += ms;
    for (const timer of clock.timers.filter((candidate) => candidate.at <= clock.now)) {
      clock.timers.splice(clock.timers.indexOf(timer), 1);
      timer.callback();
    }
  };
  for (let index = 1; index <= 12; index++) {
    notifier.show(`Approval needed ${index}`, 'Gate', `run_${index}`);
    advance(100);
  }
  assert.equal(shown.map(({ title }) => title), ['Approval needed 1', 'Approval needed 2', 'Approval needed 3']);
  advance(10_000);
  assert.equal(shown.map(({ title }) => title).slice(3), ['9 more notifications']);
  shown[3]!.click();
  assert.equal(calls.navigated, ['#/inbox']);
  advance(10_000);
  notifier.show('Run failed', 'Deploy', 'run_13');
  assert.equal(shown.at(-1)!.title, 'Run failed', 'a quiet spell later, notifications show again');
  assert.is(shown.length, 5);
});

desktop.run();
tray.run();
notifications.run();
