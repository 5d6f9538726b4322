// The renderer's shell: the layout (sidebar, main column, toasts, connection banner), the hash
// routes, and the start. In Electron `window.factory` comes from the preload; in a browser the
// web bridge builds it over remote access.

import type { DesktopBridge, FactoryApi } from '../src/core/api';
import { AppState, errorText, statusGlyphs, undoWindowMs, type AppContext, type Screen, type ScreenFactory } from './app';
import { createWebBridge, type ConnectionState } from './bridge';
import { desktopApi } from './call-error';
import { h, relativeTime, replace } from './dom';
import { routes } from './routes';
import { guardWindowClose, ScreenKeeper } from './views/drafts';
import { errorWords } from './views/error-details';
import { isUnread } from './views/inbox';
import { focusAfterNavigation, installShortcuts, skipLink } from './views/shortcuts';

declare global {
  interface Window {
    factory?: DesktopBridge;
  }
}

interface Route {
  pattern: RegExp;
  names: string[];
  screen: ScreenFactory;
}

/** Compiles '#/runs/:id' to an anchored RegExp with named segments. */
function compile(pattern: string, screen: ScreenFactory): Route {
  const names: string[] = [];
  const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([a-zA-Z]+)/g, (_match, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${source}$`), names, screen };
}

const navigation: { path: string; label: string; badge?: 'waiting' | 'unread' }[] = [
  { path: '#/runs', label: 'Runs', badge: 'waiting' },
  { path: '#/pipelines', label: 'Pipelines' },
  { path: '#/triggers', label: 'Triggers' },
  { path: '#/inbox', label: 'Inbox', badge: 'unread' },
  { path: '#/projects', label: 'Projects' },
  { path: '#/harnesses', label: 'Harnesses' },
  { path: '#/channels', label: 'Channels' },
  { path: '#/settings', label: 'Settings' },
];

function start(): void {
  const root = document.getElementById('app')!;
  let api: FactoryApi;
  let onConnection: ((listener: (state: ConnectionState) => void) => void) | undefined;
  if (window.factory) {
    api = desktopApi(window.factory);
  } else {
    const bridge = createWebBridge();
    api = bridge.api;
    onConnection = bridge.onConnection;
  }
  const state = new AppState(api);
  const compiled = routes.map(([pattern, screen]) => compile(pattern, screen));

  const main = h('main', { class: 'main', id: 'main', tabindex: '-1' });
  const banner = h('div', { class: 'banner', role: 'status', hidden: true });
  const toasts = h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
  const navList = h('ul', { class: 'nav-list' });
  const menuButton = h('button', { class: 'menu-button', type: 'button', 'aria-expanded': 'false', 'aria-controls': 'sidebar' }, 'Menu');
  // The phone's top bar: what waits for approval, one tap from the runs that wait.
  const topWaiting = h('a', { class: 'badge top-waiting', href: '#/runs?status=waiting', hidden: true });
  const sidebar = h('nav', { class: 'sidebar', id: 'sidebar', 'aria-label': 'Main' }, h('div', { class: 'brand' }, 'Factory'), navList);
  const setMenu = (open: boolean) => {
    sidebar.classList.toggle('open', open);
    menuButton.setAttribute('aria-expanded', String(open));
  };
  menuButton.addEventListener('click', () => setMenu(!sidebar.classList.contains('open')));
  // Escape closes the menu; focus inside it goes back to the button.
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !sidebar.classList.contains('open')) return;
    const inside = sidebar.contains(document.activeElement);
    setMenu(false);
    if (inside) menuButton.focus();
  });

  const context: AppContext = {
    api,
    state,
    desktop: api.platform !== 'web',
    navigate(path) {
      location.hash = path.startsWith('#') ? path : `#${path}`;
    },
    toast(message, kind = 'ok', undo) {
      const toast = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, errorWords(message),
        undo ? h('button', { type: 'button', class: 'toast-action', onclick: () => (toast.remove(), undo()) }, 'Undo') : null);
      toasts.appendChild(toast);
      setTimeout(() => toast.remove(), undo ? undoWindowMs : kind === 'error' ? 8000 : 4000);
    },
  };

  function renderNavigation(): void {
    const snapshot = state.snapshot;
    const waiting = snapshot?.runs.filter((run) => run.status === 'waiting').length ?? 0;
    const unread = snapshot?.inbox.filter((item) => isUnread(item)).length ?? 0;
    const current = location.hash.split('?')[0]!.split('/').slice(0, 2).join('/') || '#/runs';
    topWaiting.hidden = waiting === 0;
    topWaiting.textContent = `${statusGlyphs.waiting} ${waiting}`;
    topWaiting.setAttribute('aria-label', `${waiting} waiting for approval`);
    replace(navList, navigation.map((item) => {
      const count = item.badge === 'waiting' ? waiting : item.badge === 'unread' ? unread : 0;
      const label = item.badge === 'waiting' ? `${count} waiting for approval` : `${count} unread`;
      return h('li', {},
        h('a', { href: item.path, class: 'nav-link', ...(current === item.path ? { 'aria-current': 'page' } : {}) },
          item.label,
          count > 0 ? h('span', { class: `badge badge-${item.badge}`, 'aria-label': label, title: label }, count) : null));
    }));
  }

  let screen: Screen | undefined;
  // A screen left with a draft is kept and shown again at its address (views/drafts.ts).
  const screens = new ScreenKeeper();
  function show(): void {
    const hash = location.hash || '#/runs';
    screens.leave();
    screen = undefined;
    setMenu(false);
    for (const route of compiled) {
      const match = route.pattern.exec(hash.split('?')[0]!);
      if (!match) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, index) => (params[name] = decodeURIComponent(match[index + 1]!)));
      try {
        screen = screens.open(hash, () => route.screen(context, params), show);
        replace(main, screen.element);
      } catch (error) {
        replace(main, h('section', { class: 'page' }, h('h1', {}, 'Something went wrong'), h('p', {}, errorText(error))));
      }
      renderNavigation();
      return;
    }
    replace(main, h('section', { class: 'page' }, h('h1', {}, 'Not found'), h('p', {}, 'There is nothing at this address. '), h('a', { href: '#/runs' }, 'Go to Runs')));
    renderNavigation();
  }

  function showPairing(): void {
    replace(root, h('main', { class: 'pairing page' },
      h('h1', {}, 'Sign in to Factory'),
      h('p', {}, 'Open the sign-in link or scan the QR code on the desktop (Settings → Remote access), or the link printed by the headless server.')));
  }

  // The saved theme: 'system' follows prefers-color-scheme; light and dark override it.
  const applyTheme = () => {
    document.documentElement.dataset.theme = state.snapshot?.settings.theme ?? 'system';
  };
  state.subscribe(() => {
    applyTheme();
    renderNavigation();
    screen?.update?.();
  });
  // Relative times stay fresh.
  setInterval(() => {
    for (const element of document.querySelectorAll<HTMLElement>('time[data-at]')) element.textContent = relativeTime(Number(element.dataset.at));
  }, 30_000);

  onConnection?.((connection) => {
    if (connection === 'signed-out') {
      showPairing();
      return;
    }
    banner.hidden = connection !== 'reconnecting';
    banner.textContent = connection === 'reconnecting' ? 'Connection lost: reconnecting…' : '';
  });

  state.refresh().then(
    () => {
      replace(root, skipLink(main), h('div', { class: 'layout' }, h('header', { class: 'topbar' }, h('span', { class: 'brand' }, 'Factory'), topWaiting, menuButton), sidebar, h('div', { class: 'column' }, banner, main)), toasts);
      applyTheme();
      state.follow();
      window.addEventListener('hashchange', () => {
        show();
        focusAfterNavigation(main);
      });
      guardWindowClose();
      installShortcuts(context, main);
      if (api.platform !== 'web') api.on('navigate', (path) => context.navigate(path));
      show();
    },
    (error) => {
      if ((error as { status?: number }).status === 401) showPairing();
      else replace(root, h('section', { class: 'page' }, h('h1', {}, 'Factory cannot be reached'), h('p', {}, errorText(error))));
    },
  );

  // `/` focuses the search field of list pages.
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target as HTMLElement;
    if (target.closest('input, textarea, select, [contenteditable]')) return;
    const search = main.querySelector<HTMLInputElement>('input[type="search"]');
    if (search) {
      event.preventDefault();
      search.focus();
    }
  });
}

start();
