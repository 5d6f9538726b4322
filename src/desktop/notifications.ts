// Native notifications: a run that waits for approval, succeeded or failed shows one; clicking it
// brings the window forward at the run (`navigate` to `#/runs/<id>`). Also the function behind
// `desktop` notification channels (app.ts `desktopNotify`). Electron's Notification comes in as a
// constructor, so this runs in tests without the binary.
//
// Duplicates: the inbox notifications are the default. Once the user has an enabled `desktop`
// channel, that channel (with its own event and pipeline filters) decides what is shown, and the
// inbox notifications stay quiet, so no run is announced twice.

import type { FactoryApi, InboxItem, Snapshot } from '../core/api';
import { setTimer as setClampedTimer } from '../core/timers';

/** The inbox kinds that show a notification. */
const notifiedKinds: readonly InboxItem['kind'][] = ['run.waiting', 'run.succeeded', 'run.failed'];

/** The part of an Electron Notification we use. */
export interface NotificationLike {
  on(event: 'click' | 'close', listener: () => void): unknown;
  show(): void;
}

interface NotificationPorts {
  NotificationClass: new (options: { title: string; body: string }) => NotificationLike;
  /** Electron's Notification.isSupported. */
  isSupported(): boolean;
  /** Shows and focuses the window. */
  focusWindow(): void;
  /** Sends `navigate` with a hash path to the renderer. */
  navigate(path: string): void;
  /** The clock and timer for the burst limit (tests move time by hand); default the real ones. */
  now?: () => number;
  setTimer?: (callback: () => void, ms: number) => void;
}

/** The path of a run's screen. */
export function runPath(runId: string): string {
  return `#/runs/${encodeURIComponent(runId)}`;
}

/** Bodies longer than this are cut: notification centres show a few lines at most. */
const bodyLimit = 240;
/**
 * At most this many notifications show within `burstWindowMs`; the rest are counted and summed up
 * in one when the window ends, so a burst of webhook runs does not bury the desktop.
 */
const burstLimit = 3;
const burstWindowMs = 10_000;

/**
 * Shows notifications through the ports. `show(title, body, runId?)` is the one way in; the
 * notification is kept referenced until it is clicked or closed (an unreferenced one can lose its
 * click handler to the garbage collector). Beyond `burstLimit` in `burstWindowMs`, one summary
 * ("12 more notifications", a click opens the inbox) stands for the rest.
 */
export function createNotifier(ports: NotificationPorts) {
  const open = new Set<NotificationLike>();
  const now = ports.now ?? Date.now;
  const setTimer = ports.setTimer ?? ((callback, ms) => void setClampedTimer(callback, ms));
  /** When the notifications of the current window were shown. */
  let shownAt: number[] = [];
  /** Notifications held back in this burst. */
  let held = 0;

  function display(title: string, body: string, path?: string): void {
    const text = body.length > bodyLimit ? `${body.slice(0, bodyLimit - 1)}…` : body;
    const notification = new ports.NotificationClass({ title, body: text });
    open.add(notification);
    notification.on('click', () => {
      open.delete(notification);
      ports.focusWindow();
      if (path) ports.navigate(path);
    });
    notification.on('close', () => open.delete(notification));
    notification.show();
    shownAt.push(now());
  }

  function summarise(): void {
    const count = held;
    held = 0;
    shownAt = [];
    display(`${count} more notification${count === 1 ? '' : 's'}`, 'They are all in the inbox.', '#/inbox');
  }

  function show(title: string, body: string, runId?: string): void {
    if (!ports.isSupported()) return;
    shownAt = shownAt.filter((at) => now() - at < burstWindowMs);
    if (held > 0 || shownAt.length >= burstLimit) {
      if (held++ === 0) setTimer(summarise, Math.max(0, burstWindowMs - (now() - shownAt[0]!)));
      return;
    }
    display(title, body, runId ? runPath(runId) : undefined);
  }
  return {
    show,
    /** How many notifications are still referenced (for tests). */
    get openCount() {
      return open.size;
    },
    /**
     * For app.ts `desktopNotify` (src/channels/senders.ts DesktopNotify): shows a channel's notice;
     * a click opens its run when it names one.
     */
    desktopNotify: async (notice: { title: string; text: string; runId?: string }): Promise<void> => {
      show(notice.title, notice.text, notice.runId);
    },
  };
}

/** True when an enabled `desktop` channel exists: it then shows run notifications itself. */
function hasDesktopChannel(snapshot: Pick<Snapshot, 'channels'>): boolean {
  return snapshot.channels.some((channel) => channel.kind === 'desktop' && channel.enabled);
}

/**
 * Shows a notification for every `inbox` event of a notified kind, unless a desktop channel
 * already covers it. Returns a function that stops listening.
 */
export function notifyInboxEvents(api: Pick<FactoryApi, 'on' | 'snapshot'>, show: (title: string, body: string, runId?: string) => void): () => void {
  let channelCovers = false;
  const remember = (snapshot: Snapshot) => {
    channelCovers = hasDesktopChannel(snapshot);
  };
  api.snapshot().then(remember, () => undefined);
  const unsubscribes = [
    api.on('snapshot', remember),
    api.on('inbox', (item) => {
      if (channelCovers || !notifiedKinds.includes(item.kind)) return;
      show(item.title, item.body ?? '', item.runId);
    }),
  ];
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
