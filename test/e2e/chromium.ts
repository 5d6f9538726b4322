// A small DevTools-protocol client for end-to-end tests: drives Debian's Chromium (no puppeteer)
// over --remote-debugging-pipe (fd 3: commands to Chromium, fd 4: messages from it; each message
// is JSON ended by a NUL byte). One browser, one page (a flattened session).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { describeNeed, findTool, type Tool } from '../helpers/tools';

/** Debian's Chromium on PATH (`chromium-browser` elsewhere), or the binary $CHROMIUM_PATH names. */
export const chromium: Tool = { command: process.env.CHROMIUM_PATH || 'chromium', alternatives: ['chromium-browser'], package: 'chromium' };

/** The Chromium binary; throws with the install line when there is none. */
export function findChromium(): string {
  const found = findTool(chromium);
  if (!found) throw new Error(`Chromium is missing: the end-to-end tests ${describeNeed(chromium)}`);
  return found;
}

interface Pending {
  resolve(result: any): void;
  reject(error: Error): void;
  method: string;
}

type EventListener = (params: any, sessionId: string | undefined) => void;

export interface PageProblems {
  /** Console errors, uncaught exceptions and error log entries (`source` is Log's: network, javascript…). */
  errors: { text: string; source: string; url?: string }[];
  /** Every URL the page requested. */
  requests: string[];
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<EventListener>>();
  private buffer = Buffer.alloc(0);
  private exited = false;
  stderr = '';

  private constructor(private readonly child: ChildProcess, private readonly profile: string) {
    const input = child.stdio[4] as Readable;
    input.on('data', (chunk: Buffer) => this.receive(chunk));
    child.stderr!.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    child.stdout!.resume();
    child.on('exit', () => {
      this.exited = true;
      for (const { reject, method } of this.pending.values()) reject(new Error(`Chromium exited during ${method}\n${this.stderr}`));
      this.pending.clear();
    });
  }

  static async launch(): Promise<Browser> {
    const binary = findChromium();
    const profile = makeTempDir('factory-chromium');
    const child = spawn(binary, [
      '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--hide-scrollbars', '--mute-audio',
      `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank',
    ], { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const browser = new Browser(child, profile);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    await browser.send('Browser.getVersion');
    return browser;
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    let end: number;
    while ((end = this.buffer.indexOf(0)) >= 0) {
      const text = this.buffer.subarray(0, end).toString('utf8');
      this.buffer = this.buffer.subarray(end + 1);
      let message: any;
      try {
        message = JSON.parse(text);
      } catch {
        continue;
      }
      if (typeof message.id === 'number') {
        const pending = this.pending.get(message.id);
        if (!pending) continue;
        this.pending.delete(message.id);
        if (message.error) pending.reject(new Error(`${pending.method}: ${message.error.message}${message.error.data ? ` (${message.error.data})` : ''}`));
        else pending.resolve(message.result);
      } else if (message.method) {
        for (const listener of this.listeners.get(message.method) ?? []) listener(message.params, message.sessionId);
      }
    }
  }

  /** One protocol command; `sessionId` scopes it to a page. Rejects after `timeoutMs`. */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string, timeoutMs = 30_000): Promise<any> {
    if (this.exited) return Promise.reject(new Error(`Chromium is not running (${method})\n${this.stderr}`));
    const id = this.nextId++;
    const message = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        method,
        resolve: (result) => (clearTimeout(timer), resolve(result)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      (this.child.stdio[3] as Writable).write(message + '\0');
    });
  }

  on(event: string, listener: EventListener): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set!.delete(listener);
  }

  /** A new tab, attached with a flattened session, with Page/Runtime/Network/Log on. */
  async newPage(): Promise<Page> {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId);
    await Promise.all(['Page.enable', 'Runtime.enable', 'Network.enable', 'Log.enable'].map((method) => this.send(method, {}, sessionId)));
    return page;
  }

  /** Stops Chromium and removes its profile folder. */
  async close(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.send('Browser.close', {}, undefined, 2000).catch(() => undefined);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    removeTempDir(this.profile);
  }
}

export class Page {
  readonly problems: PageProblems = { errors: [], requests: [] };

  constructor(readonly browser: Browser, readonly sessionId: string) {
    const mine = (listener: (params: any) => void): EventListener => (params, sessionId) => {
      if (sessionId === this.sessionId) listener(params);
    };
    browser.on('Runtime.consoleAPICalled', mine((params) => {
      if (params.type !== 'error') return;
      this.problems.errors.push({ source: 'console', text: `console.error: ${params.args.map((arg: any) => arg.value ?? arg.description ?? '').join(' ')}` });
    }));
    browser.on('Runtime.exceptionThrown', mine((params) => {
      const details = params.exceptionDetails;
      this.problems.errors.push({ source: 'exception', text: `exception: ${details.exception?.description ?? details.text}`, url: details.url });
    }));
    browser.on('Log.entryAdded', mine((params) => {
      const { entry } = params;
      if (entry.level === 'error') this.problems.errors.push({ source: entry.source, text: `log (${entry.source}): ${entry.text} ${entry.url ?? ''}`.trim(), url: entry.url });
    }));
    browser.on('Network.requestWillBeSent', mine((params) => this.problems.requests.push(params.request.url)));
  }

  send(method: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<any> {
    return this.browser.send(method, params, this.sessionId, timeoutMs);
  }

  /** Navigates and waits for the load event. */
  async goto(url: string, timeoutMs = 15_000): Promise<void> {
    const loaded = new Promise<void>((resolve) => {
      const stop = this.browser.on('Page.loadEventFired', (_params, sessionId) => {
        if (sessionId !== this.sessionId) return;
        stop();
        resolve();
      });
    });
    const result = await this.send('Page.navigate', { url });
    if (result.errorText) throw new Error(`Navigating to ${url} failed: ${result.errorText}`);
    let timer: NodeJS.Timeout;
    await Promise.race([loaded, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${url} did not load within ${timeoutMs} ms`)), timeoutMs)))])
      .finally(() => clearTimeout(timer));
  }

  /** The value of a JavaScript expression in the page (promises awaited); throws what the page threw. */
  async evaluate<T = any>(expression: string): Promise<T> {
    const result = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true, userGesture: true });
    if (result.exceptionDetails) {
      const details = result.exceptionDetails;
      throw new Error(`In the page: ${details.exception?.description ?? details.text}\n  while evaluating: ${expression.slice(0, 300)}`);
    }
    return result.result.value as T;
  }

  /** Polls `expression` until it is truthy; returns its value. The error names the expression. */
  async waitFor<T = any>(expression: string, timeoutMs = 10_000, what = expression): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (;;) {
      try {
        const value = await this.evaluate<T>(expression);
        if (value) return value;
      } catch (error) {
        lastError = error;
      }
      if (Date.now() > deadline) {
        const location = await this.evaluate<string>('location.href').catch(() => '?');
        throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (at ${location})${lastError ? `; last error: ${String(lastError)}` : ''}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Clicks the first element matching `selector` (fails when there is none). */
  async click(selector: string): Promise<void> {
    const clicked = await this.evaluate<boolean>(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); if (!el) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`);
    if (!clicked) throw new Error(`Nothing to click: no element matches ${selector}`);
  }

  /** Sets a field's value and dispatches `input` and `change`, as typing would. */
  async fill(selector: string, value: string): Promise<void> {
    const done = await this.evaluate<boolean>(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) return false;
      el.focus();
      el.value = ${JSON.stringify(value)};
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return true;
    })()`);
    if (!done) throw new Error(`Nothing to fill: no element matches ${selector}`);
  }

  /** Desktop (1280×800) or phone (390×844, mobile, 2×) viewport. */
  async viewport(kind: 'desktop' | 'phone'): Promise<void> {
    if (kind === 'phone') await this.send('Emulation.setDeviceMetricsOverride', { width: 390, height: 844, deviceScaleFactor: 2, mobile: true });
    else await this.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false });
  }

  async colorScheme(scheme: 'light' | 'dark'): Promise<void> {
    await this.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: scheme }] });
  }

  /** A PNG of the viewport written to `path` (folders made). */
  async screenshot(path: string): Promise<void> {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png' });
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, Buffer.from(data, 'base64'));
  }
}
