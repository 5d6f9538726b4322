// The tray icon: opens the window, lists the runs waiting for approval, pauses and resumes
// triggers, quits. The menu is plain data built by buildTrayMenu (tested without Electron);
// installTray keeps it, the tooltip, the title and the dock badge in step with the events.

import type { Menu as ElectronMenu, MenuItemConstructorOptions, NativeImage, Tray } from 'electron';
import type { FactoryApi, Run, Snapshot } from '../core/api';

interface TrayActions {
  /** Shows and focuses the window. */
  open(): void;
  /** Shows the window at a hash path such as `#/runs/<id>`. */
  navigate(path: string): void;
  /** Pauses (true) or resumes (false) triggers. */
  setTriggersPaused(paused: boolean): void;
  quit(): void;
}

/** What the menu is built from: the runs and the settings of a snapshot. */
export type TrayState = Pick<Snapshot, 'runs' | 'settings'>;

/** Longest run label in the menu; longer titles are cut with an ellipsis. */
const labelLimit = 60;

/** The runs waiting for an approval, oldest first (the order they have been waiting in). */
export function waitingRuns(runs: readonly Run[]): Run[] {
  return runs.filter((run) => run.status === 'waiting').sort((a, b) => a.createdAt - b.createdAt);
}

/** A run's name in the menu: its issue title, else its pipeline's name. */
function runLabel(run: Run): string {
  const label = run.issue?.title?.trim() || run.pipelineName || run.id;
  return label.length > labelLimit ? `${label.slice(0, labelLimit - 1)}…` : label;
}

/**
 * "Paused triggers" means the webhook server is switched off (settings.webhookServer.enabled).
 * Saving every trigger disabled would rewrite the user's own trigger settings and lose which ones
 * were on, so the tray only switches the server: webhook deliveries stop, nothing else changes.
 * Polling triggers keep running; the Triggers screen switches those one by one.
 */
function triggersPaused(state: TrayState): boolean {
  return !state.settings.webhookServer.enabled;
}

/** The tray menu as a template for Menu.buildFromTemplate. */
export function buildTrayMenu(state: TrayState, actions: TrayActions): MenuItemConstructorOptions[] {
  const waiting = waitingRuns(state.runs);
  const waitingItems: MenuItemConstructorOptions[] = waiting.length
    ? waiting.map((run) => ({ label: runLabel(run), click: () => actions.navigate(`#/runs/${encodeURIComponent(run.id)}`) }))
    : [{ label: 'No runs waiting', enabled: false }];
  const paused = triggersPaused(state);
  return [
    { label: 'Open Factory', click: () => actions.open() },
    { type: 'separator' },
    { label: `Waiting for approval (${waiting.length})`, submenu: waitingItems },
    { type: 'separator' },
    paused
      ? { label: 'Resume triggers', toolTip: 'Switches the webhook server on', click: () => actions.setTriggersPaused(false) }
      : { label: 'Pause triggers', toolTip: 'Switches the webhook server off', click: () => actions.setTriggersPaused(true) },
    { type: 'separator' },
    { label: 'Quit', click: () => actions.quit() },
  ];
}

/** The tooltip: the app name, and how many runs wait when any do. */
function trayToolTip(waitingCount: number): string {
  if (waitingCount === 0) return 'Factory';
  return `Factory: ${waitingCount} run${waitingCount === 1 ? '' : 's'} waiting for approval`;
}

/**
 * A 16×16 disc as BGRA pixels for nativeImage.createFromBitmap: black for a macOS template image
 * (the menu bar tints it), mid grey elsewhere (readable on light and dark panels).
 */
function trayIconPixels(size: number, template: boolean): Buffer {
  const pixels = Buffer.alloc(size * size * 4);
  const shade = template ? 0 : 0x80;
  const centre = (size - 1) / 2;
  const outer = size / 2 - 1;
  const inner = outer - 3;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const distance = Math.hypot(x - centre, y - centre);
      const inRing = distance <= outer && distance >= inner;
      const inDot = distance <= inner - 2;
      const offset = (y * size + x) * 4;
      pixels[offset] = shade;
      pixels[offset + 1] = shade;
      pixels[offset + 2] = shade;
      pixels[offset + 3] = inRing || inDot ? 0xff : 0;
    }
  }
  return pixels;
}

/** What installTray uses of Electron besides the Tray class. */
interface TrayElectron {
  Menu: Pick<typeof ElectronMenu, 'buildFromTemplate'>;
  nativeImage: { createFromBitmap(buffer: Buffer, options: { width: number; height: number }): NativeImage };
}

interface TrayHooks extends Omit<TrayActions, 'setTriggersPaused'> {
  /** The dock / launcher badge (app.setBadgeCount); absent where not supported. */
  setBadgeCount?: (count: number) => void;
  platform: NodeJS.Platform;
}

/**
 * Creates the tray icon and keeps its menu, tooltip, title (macOS menu bar text) and the badge in
 * step with `snapshot`, `run` and `run-deleted` events. Returns a function that removes it.
 */
export function installTray(
  TrayClass: new (image: NativeImage) => Tray,
  electron: TrayElectron,
  api: Pick<FactoryApi, 'on' | 'snapshot' | 'saveSettings'>,
  hooks: TrayHooks,
): () => void {
  const size = 16;
  const template = hooks.platform === 'darwin';
  const image = electron.nativeImage.createFromBitmap(trayIconPixels(size, template), { width: size, height: size });
  if (template) image.setTemplateImage(true);
  const tray = new TrayClass(image);

  let settings: TrayState['settings'] | undefined;
  const runs = new Map<string, Run>();
  let shownKey = '';

  const actions: TrayActions = {
    open: hooks.open,
    navigate: hooks.navigate,
    quit: hooks.quit,
    setTriggersPaused(paused) {
      api.saveSettings({ webhookServer: { enabled: !paused } }).catch((error: unknown) => {
        console.warn(`Could not ${paused ? 'pause' : 'resume'} triggers: ${error instanceof Error ? error.message : String(error)}`);
      });
    },
  };

  function refresh(): void {
    if (!settings) return;
    const state: TrayState = { runs: [...runs.values()], settings };
    const waiting = waitingRuns(state.runs);
    // Rebuild only when what the menu shows changed: run events come often.
    const key = JSON.stringify([triggersPaused(state), waiting.map((run) => [run.id, runLabel(run)])]);
    if (key === shownKey) return;
    shownKey = key;
    tray.setContextMenu(electron.Menu.buildFromTemplate(buildTrayMenu(state, actions)));
    tray.setToolTip(trayToolTip(waiting.length));
    if (hooks.platform === 'darwin') tray.setTitle(waiting.length ? String(waiting.length) : '');
    hooks.setBadgeCount?.(waiting.length);
  }

  function applySnapshot(snapshot: Snapshot): void {
    settings = snapshot.settings;
    runs.clear();
    for (const run of snapshot.runs) runs.set(run.id, run);
    refresh();
  }

  const unsubscribes = [
    api.on('snapshot', applySnapshot),
    api.on('run', (run) => {
      runs.set(run.id, run);
      refresh();
    }),
    api.on('run-deleted', (id) => {
      runs.delete(id);
      refresh();
    }),
  ];
  // A click opens the menu (Linux, macOS); a double-click opens the window where the OS reports it.
  tray.on('double-click', () => hooks.open());
  api.snapshot().then(applySnapshot, (error: unknown) => console.warn(`Tray: no snapshot: ${error instanceof Error ? error.message : String(error)}`));

  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
    tray.destroy();
  };
}
