// The window's locks, without the Electron binary: a static check that every window is created with
// secureWebPreferences, and lockDown driven through a fake webContents.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { contentSecurityPolicy, isAppUrl, lockDown, secureWebPreferences, type HeadersDetails, type PreventableEvent } from '../../src/desktop/window';

const root = process.cwd();

function listTs(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? listTs(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/** The text of a call's arguments: from the `(` at `open` to its matching `)`. */
function callArguments(text: string, open: number): string {
  let depth = 0;
  for (let index = open; index < text.length; index++) {
    if (text[index] === '(') depth++;
    else if (text[index] === ')' && --depth === 0) return text.slice(open + 1, index);
  }
  return text.slice(open + 1);
}

const statics = suite('desktop windows (static)');

statics('every BrowserWindow created under src/desktop gets secureWebPreferences', () => {
  const files = listTs(join(root, 'src', 'desktop'));
  assert.ok(files.length > 0, 'no files under src/desktop');
  let creations = 0;
  const problems: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\bnew\s+(BrowserWindow\w*)\s*\(|\b(BrowserWindowClass)\s*\(/g)) {
      creations++;
      const args = callArguments(text, match.index! + match[0].length - 1);
      if (!/webPreferences\s*:\s*secureWebPreferences\(/.test(args)) problems.push(`${relative(root, file)}: ${match[0]} without webPreferences: secureWebPreferences(...)`);
    }
    if (/nodeIntegration\s*:\s*true|contextIsolation\s*:\s*false|sandbox\s*:\s*false|webSecurity\s*:\s*false/.test(text)) problems.push(`${relative(root, file)} switches a protection off`);
  }
  assert.ok(creations > 0, 'found no window creation to check');
  assert.equal(problems, []);
});

statics('secureWebPreferences isolates, sandboxes and keeps Node out of the page', () => {
  assert.equal(secureWebPreferences('/app/preload.js'), {
    preload: '/app/preload.js',
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  });
});

const appUrl = 'file:///opt/factory/dist/ui/index.html';

function fakeContents() {
  const listeners = new Map<string, (...args: any[]) => void>();
  const fake = {
    openHandler: undefined as undefined | ((details: { url: string }) => { action: string }),
    permissionHandler: undefined as undefined | ((webContents: unknown, permission: string, callback: (granted: boolean) => void) => void),
    checkHandler: undefined as undefined | ((...args: any[]) => boolean),
    headersListener: undefined as undefined | ((details: HeadersDetails, callback: (response: { responseHeaders?: Record<string, string | string[]> }) => void) => void),
    opened: [] as string[],
    setWindowOpenHandler(handler: any) {
      fake.openHandler = handler;
    },
    on(event: string, listener: (...args: any[]) => void) {
      listeners.set(event, listener);
      return fake;
    },
    session: {
      webRequest: {
        onHeadersReceived(listener: any) {
          fake.headersListener = listener;
        },
      },
      setPermissionRequestHandler(handler: any) {
        fake.permissionHandler = handler;
      },
      setPermissionCheckHandler(handler: any) {
        fake.checkHandler = handler;
      },
    },
    /** Emits an event with a preventable first argument; true when it was prevented. */
    emit(event: string, ...args: unknown[]): boolean {
      let prevented = false;
      const preventable: PreventableEvent = { preventDefault: () => (prevented = true) };
      const listener = listeners.get(event);
      assert.ok(listener, `no ${event} listener`);
      listener!(preventable, ...args);
      return prevented;
    },
  };
  lockDown(fake, { appUrl, openExternal: async (url) => void fake.opened.push(url) });
  return fake;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

const locks = suite('lockDown');

locks('denies window.open and sends http(s) links to the browser, nothing else', async () => {
  const contents = fakeContents();
  assert.equal(contents.openHandler!({ url: 'https://example.com/a' }), { action: 'deny' });
  assert.equal(contents.openHandler!({ url: 'file:///etc/passwd' }), { action: 'deny' });
  assert.equal(contents.openHandler!({ url: 'javascript:alert(1)' }), { action: 'deny' });
  await settle();
  assert.equal(contents.opened, ['https://example.com/a']);
});

locks('cancels navigation away and hands web links to the browser', async () => {
  const contents = fakeContents();
  assert.ok(contents.emit('will-navigate', 'https://evil.example/'));
  assert.ok(contents.emit('will-redirect', 'http://evil.example/x'));
  assert.ok(contents.emit('will-navigate', 'file:///etc/passwd'));
  assert.ok(contents.emit('will-navigate', 'file:///opt/factory/dist/ui/other.html'));
  assert.ok(contents.emit('will-navigate', 'data:text/html,<script>1</script>'));
  await settle();
  assert.equal(contents.opened, ['https://evil.example/', 'http://evil.example/x']);
});

locks('lets our own page navigate to itself, hash and query included', () => {
  const contents = fakeContents();
  assert.not.ok(contents.emit('will-navigate', appUrl));
  assert.not.ok(contents.emit('will-navigate', `${appUrl}#/runs/run_1`));
  assert.not.ok(contents.emit('will-navigate', `${appUrl}?x=1`));
  assert.ok(isAppUrl(appUrl, appUrl));
  assert.not.ok(isAppUrl('file://host/opt/factory/dist/ui/index.html', appUrl));
});

locks('prevents attaching a webview', () => {
  const contents = fakeContents();
  assert.ok(contents.emit('will-attach-webview', {}, {}));
});

locks('refuses every permission request and check', () => {
  const contents = fakeContents();
  for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read']) {
    let granted: boolean | undefined;
    contents.permissionHandler!({}, permission, (answer) => (granted = answer));
    assert.is(granted, false, permission);
  }
  assert.is(contents.checkHandler!({}, 'media', 'file://', {}), false);
});

locks('puts our Content-Security-Policy on every response, replacing any other', () => {
  const contents = fakeContents();
  let answer: { responseHeaders?: Record<string, string | string[]> } | undefined;
  contents.headersListener!({ url: appUrl, responseHeaders: { 'content-security-policy': ["default-src *"], 'Content-Type': ['text/html'] } }, (response) => (answer = response));
  assert.equal(answer!.responseHeaders, { 'Content-Type': ['text/html'], 'Content-Security-Policy': [contentSecurityPolicy] });
  for (const directive of ["default-src 'self'", "script-src 'self'", "base-uri 'none'", "frame-ancestors 'none'", "form-action 'none'", "img-src 'self' data:"]) {
    assert.ok(contentSecurityPolicy.includes(directive), directive);
  }
  assert.not.match(contentSecurityPolicy, /unsafe-inline|unsafe-eval/);
});

statics.run();
locks.run();
