// The desktop entry (Electron main process): one instance, one locked-down window, the IPC door,
// the tray and native notifications over the engine that app.ts starts; on quit, in-progress runs
// are confirmed and everything is stopped (servers closed, writes flushed) before the process ends.

import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, Notification, shell, Tray } from 'electron';
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFactory, type Factory } from '../app';
import type { Snapshot } from '../core/api';
import { errorMessage } from '../core/errors';
import { createDesktopFunctions, findOnPath } from './desktop-functions';
import { eventChannel, forwardEvents, isTrustedFrame, registerIpc, type EventMessage } from './ipc';
import { createNotifier, notifyInboxEvents } from './notifications';
import { installTray } from './tray';
import { createMainWindow, lockDown } from './window';

// dist/desktop/main.js: the preload sits beside it, the renderer in dist/ui.
const preloadPath = join(__dirname, 'preload.js');
const uiRoot = join(__dirname, '..', 'ui');
const indexPath = join(uiRoot, 'index.html');
const appUrl = pathToFileURL(indexPath).href;

/** Folders searched for editors besides PATH: apps started from the macOS Finder get a short PATH. */
const extraEditorFolders = ['/usr/local/bin', '/opt/homebrew/bin', '/snap/bin'];

let factory: Factory | undefined;
let mainWindow: BrowserWindow | undefined;

function showWindow(): void {
  if (!mainWindow || mainWindow.isDestroyed()) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.show();
  mainWindow.focus();
}

/** Shows the window at a hash path (the renderer's `navigate` event). */
function navigate(path: string): void {
  showWindow();
  if (!mainWindow || mainWindow.isDestroyed()) return;
  const message: EventMessage = { event: 'navigate', payload: path };
  mainWindow.webContents.send(eventChannel, message);
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function countInProgress(snapshot: Snapshot): number {
  return snapshot.runs.filter((run) => run.status === 'running' || run.status === 'waiting').length;
}

async function start(): Promise<void> {
  const notifier = createNotifier({
    NotificationClass: Notification,
    isSupported: () => Notification.isSupported(),
    focusWindow: showWindow,
    navigate,
  });
  const desktop = createDesktopFunctions(
    {
      shell: { openExternal: (url) => shell.openExternal(url), openPath: (path) => shell.openPath(path) },
      dialog: {
        showOpenDialog: (options) => (mainWindow && !mainWindow.isDestroyed() ? dialog.showOpenDialog(mainWindow, options) : dialog.showOpenDialog(options)),
      },
      spawn: (command, args, options) => spawn(command, args, options),
      which: (command) => findOnPath(command, [process.env.PATH ?? '', ...extraEditorFolders].join(':'), isExecutableFile),
    },
    {
      // Remote access exists once startFactory has returned; the renderer cannot call before then.
      pairing: () => factory!.remote.pairing(),
      resetToken: () => factory!.remote.resetToken(),
    },
  );

  try {
    factory = await startFactory({
      dataDir: app.getPath('userData'),
      platform: process.platform === 'darwin' ? 'darwin' : 'linux',
      uiRoot,
      desktop,
      desktopNotify: notifier.desktopNotify,
    });
  } catch (error) {
    dialog.showErrorBox('Factory did not start', errorMessage(error));
    app.exit(1);
    return;
  }
  const { api } = factory;

  const { window, loaded } = createMainWindow(BrowserWindow, {
    preloadPath,
    indexPath,
    beforeLoad: (created) => lockDown(created.webContents, { appUrl, openExternal: (url) => shell.openExternal(url) }),
  });
  mainWindow = window;
  const windowContentsId = window.webContents.id;
  registerIpc(ipcMain, api, (event) => event.sender.id === windowContentsId && isTrustedFrame(event.senderFrame, appUrl));
  forwardEvents(api, (channel, payload) => {
    if (!window.isDestroyed()) window.webContents.send(channel, payload);
  });
  loaded.catch((error: unknown) => console.error(`Could not load the Factory window: ${errorMessage(error)}`));

  // A form holding a draft (ui/views/drafts.ts) holds back a reload or Quit; Electron cancels
  // silently unless asked, so ask as a browser would: Leave lets the page go.
  window.webContents.on('will-prevent-unload', (event) => {
    const choice = dialog.showMessageBoxSync(window, { type: 'question', buttons: ['Leave', 'Stay'], defaultId: 1, cancelId: 1,
      message: 'Leave without saving your changes?', detail: 'What you typed in a form and did not save is lost.' });
    if (choice === 0) event.preventDefault();
  });

  // Closing the window keeps Factory running in the tray (triggers and runs go on); Quit ends it.
  window.on('close', (event) => {
    if (quitState === 'idle') {
      event.preventDefault();
      window.hide();
    }
  });

  installTray(Tray, { Menu, nativeImage }, api, {
    open: showWindow,
    navigate,
    quit: () => app.quit(),
    setBadgeCount: (count) => {
      app.setBadgeCount(count);
    },
    platform: process.platform,
  });
  notifyInboxEvents(api, notifier.show);
}

// Quitting: `before-quit` is cancelled once, in-progress runs are confirmed, Factory is stopped,
// and only then does app.exit end the process.
let quitState: 'idle' | 'asking' | 'stopping' | 'done' = 'idle';

async function quitCleanly(): Promise<void> {
  if (!factory) {
    quitState = 'done';
    app.exit(0);
    return;
  }
  quitState = 'asking';
  try {
    const inProgress = countInProgress(await factory.api.snapshot());
    if (inProgress > 0) {
      const options = {
        type: 'question' as const,
        buttons: ['Quit', 'Cancel'],
        defaultId: 1,
        cancelId: 1,
        message: `Quit Factory? ${inProgress} run${inProgress === 1 ? ' is' : 's are'} in progress; running steps will be stopped`,
      };
      const choice = mainWindow && !mainWindow.isDestroyed() && mainWindow.isVisible() ? dialog.showMessageBoxSync(mainWindow, options) : dialog.showMessageBoxSync(options);
      if (choice !== 0) {
        quitState = 'idle';
        return;
      }
    }
  } catch (error) {
    console.error(`Could not read the runs before quitting: ${errorMessage(error)}`);
  }
  quitState = 'stopping';
  try {
    await factory.stop();
  } catch (error) {
    console.error(`Factory did not stop cleanly: ${errorMessage(error)}`);
  }
  quitState = 'done';
  app.exit(0);
}

// Every renderer is sandboxed, whatever its preferences say.
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  // Another Factory runs on this data folder: it brings its window forward (second-instance).
  app.quit();
} else {
  app.on('second-instance', () => showWindow());
  app.on('activate', () => showWindow());
  // Backstop for any web contents but ours: no new windows, no <webview>.
  app.on('web-contents-created', (_event, contents) => {
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });
  // The tray keeps Factory alive without a window.
  app.on('window-all-closed', () => undefined);
  app.on('before-quit', (event) => {
    if (quitState === 'done') return;
    event.preventDefault();
    if (quitState === 'idle') void quitCleanly();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  app.whenReady().then(start, (error: unknown) => {
    console.error(`Electron did not start: ${errorMessage(error)}`);
    app.exit(1);
  });
}
