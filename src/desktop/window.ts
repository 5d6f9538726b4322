// The one Factory window and the locks on it (STYLE "Electron, small and locked down", after
// electron/fiddle's src/main/windows.ts): isolated, sandboxed, no Node in the page; no new windows,
// no navigation away from our own page, no <webview>, no permissions, and a Content-Security-Policy
// on every response. Written against small interfaces so the tests run without the Electron binary;
// this file imports only types from electron.

import type { BrowserWindow, BrowserWindowConstructorOptions, WebPreferences } from 'electron';

/** The policy for our pages: only our own files, no inline code, no framing, no form posts. */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The web preferences of every Factory window: the preload is the page's only bridge; the page has
 * no Node, runs sandboxed in an isolated world, and cannot embed <webview>.
 */
export function secureWebPreferences(preloadPath: string): WebPreferences {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  };
}

/** A BrowserWindow constructor (Electron's, or a fake in tests). */
type BrowserWindowConstructor = new (options: BrowserWindowConstructorOptions) => BrowserWindow;

interface MainWindowOptions {
  /** Absolute path of dist/desktop/preload.js. */
  preloadPath: string;
  /** Absolute path of dist/ui/index.html. */
  indexPath: string;
  title?: string;
  /** Called with the new window before its page starts loading: lockDown goes here. */
  beforeLoad?: (window: BrowserWindow) => void;
}

/**
 * Creates the Factory window with secureWebPreferences, hidden until its first paint, and loads
 * our page with loadFile, after `beforeLoad` (which should lockDown its webContents). `loaded`
 * settles when the page has loaded, or rejects when it could not be.
 */
export function createMainWindow(BrowserWindowClass: BrowserWindowConstructor, options: MainWindowOptions): { window: BrowserWindow; loaded: Promise<void> } {
  const window = new BrowserWindowClass({
    width: 1280,
    height: 820,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: options.title ?? 'Factory',
    webPreferences: secureWebPreferences(options.preloadPath),
  });
  window.once('ready-to-show', () => window.show());
  options.beforeLoad?.(window);
  const loaded = window.loadFile(options.indexPath);
  return { window, loaded };
}

/** The navigation event argument we use (Electron's Event). */
export interface PreventableEvent {
  preventDefault(): void;
}

/** The header listener argument we use (Electron's OnHeadersReceivedListenerDetails). */
export interface HeadersDetails {
  url: string;
  responseHeaders?: Record<string, string[]>;
}

/** The part of Electron's WebContents that lockDown uses. */
interface LockableContents {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' } | { action: 'allow' }): void;
  on(event: 'will-navigate', listener: (event: PreventableEvent, url: string) => void): unknown;
  on(event: 'will-redirect', listener: (event: PreventableEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): unknown;
  session: {
    webRequest: {
      onHeadersReceived(listener: (details: HeadersDetails, callback: (response: { responseHeaders?: Record<string, string | string[]> }) => void) => void): void;
    };
    setPermissionRequestHandler(handler: ((webContents: any, permission: any, callback: (granted: boolean) => void) => void) | null): void;
    setPermissionCheckHandler(handler: ((...args: any[]) => boolean) | null): void;
  };
}

interface LockDownOptions {
  /** The file URL of our page (dist/ui/index.html). */
  appUrl: string;
  /** Opens an http(s) link in the user's browser; its failure is only logged. */
  openExternal: (url: string) => Promise<unknown> | unknown;
}

/** True when `url` is our own page: the same file, whatever its query or hash. */
export function isAppUrl(url: string, appUrl: string): boolean {
  const page = parseUrl(url);
  const app = parseUrl(appUrl);
  if (!page || !app || page.protocol !== 'file:') return false;
  return page.protocol === app.protocol && page.host === app.host && page.pathname === app.pathname;
}

/** True for http: and https: URLs, the only ones handed to the browser. */
function isWebUrl(url: string): boolean {
  const parsed = parseUrl(url);
  return parsed !== undefined && (parsed.protocol === 'http:' || parsed.protocol === 'https:');
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * Locks a window's contents to our page: window.open and target=_blank are denied (http(s) links
 * go to the browser instead), navigating or redirecting anywhere but our own page is cancelled
 * (http(s) targets go to the browser), <webview> cannot be attached, every permission request and
 * check is refused, and every response carries contentSecurityPolicy.
 */
export function lockDown(contents: LockableContents, options: LockDownOptions): void {
  const sendToBrowser = (url: string) => {
    if (!isWebUrl(url)) return;
    Promise.resolve()
      .then(() => options.openExternal(url))
      .catch((error: unknown) => console.warn(`Could not open ${url}: ${error instanceof Error ? error.message : String(error)}`));
  };
  contents.setWindowOpenHandler(({ url }) => {
    sendToBrowser(url);
    return { action: 'deny' };
  });
  const guardNavigation = (event: PreventableEvent, url: string) => {
    if (isAppUrl(url, options.appUrl)) return;
    event.preventDefault();
    sendToBrowser(url);
  };
  contents.on('will-navigate', guardNavigation);
  contents.on('will-redirect', guardNavigation);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  contents.session.setPermissionCheckHandler(() => false);
  contents.session.webRequest.onHeadersReceived((details, callback) => {
    const headers: Record<string, string | string[]> = {};
    // Drop any policy a response brings along, so ours is the only one.
    for (const [name, value] of Object.entries(details.responseHeaders ?? {})) {
      if (name.toLowerCase() !== 'content-security-policy') headers[name] = value;
    }
    headers['Content-Security-Policy'] = [contentSecurityPolicy];
    callback({ responseHeaders: headers });
  });
}
