// The renderer's `window.factory`: one function per method of the one method list, each invoking
// `factory:<method>`, plus `platform` and `on`. Never exposes ipcRenderer or a generic invoke.
// Each method resolves with a MethodAnswer and never rejects: the context bridge would copy only a
// rejected Error's message, and a refused form needs its field paths too (ui/call-error.ts turns a
// failure back into an Error). Kept apart from preload.ts (which imports electron) so tests drive
// it with a fake ipcRenderer.

import type { DesktopBridge, FactoryEventName, MethodAnswer, Unsubscribe } from '../core/api';
import { methodNames } from '../core/api';

/** The one channel every pushed event arrives on, as `{ event, payload }` (ipc.ts sends it). */
const eventChannel = 'factory:event';

/** The part of Electron's `ipcRenderer` we use. */
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: any[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: any[]) => void): unknown;
}

/**
 * Electron rejects an invoke with `Error invoking remote method '<channel>': Error: <message>`;
 * the renderer is given `<message>` alone, as the remote door gives it.
 */
export function unwrapInvokeError(channel: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const prefix = `Error invoking remote method '${channel}': `;
  if (!message.startsWith(prefix)) return new Error(message);
  return new Error(message.slice(prefix.length).replace(/^(?:[A-Za-z]*Error): /, ''));
}

/**
 * Builds the object exposed as `window.factory`: a plain object of functions and the platform
 * string, so contextBridge can copy it. Trailing undefined arguments are left out of the call. A
 * method resolves with the main process's MethodAnswer (ipc.ts `callFromRenderer`); an invoke that
 * rejects (a refused window, no handler) resolves as `{ ok: false, error }` with Electron's
 * wrapping taken off.
 */
export function createPreloadApi(ipcRenderer: IpcRendererLike, platform: 'darwin' | 'linux'): DesktopBridge {
  const exposed: Record<string, unknown> = { platform };

  for (const name of methodNames) {
    const channel = `factory:${name}`;
    exposed[name] = (...args: unknown[]) => {
      let count = args.length;
      while (count > 0 && args[count - 1] === undefined) count--;
      return ipcRenderer.invoke(channel, ...args.slice(0, count)).then(
        (answer) => answer as MethodAnswer,
        (error: unknown): MethodAnswer => ({ ok: false, error: unwrapInvokeError(channel, error).message }),
      );
    };
  }

  // Events: one shared ipcRenderer listener, attached while anyone listens, dispatching by name.
  const subscribers = new Map<FactoryEventName, Set<(payload: unknown) => void>>();
  let subscriberCount = 0;
  const dispatch = (_event: unknown, message: unknown) => {
    if (!message || typeof message !== 'object') return;
    const { event, payload } = message as { event?: unknown; payload?: unknown };
    const callbacks = subscribers.get(event as FactoryEventName);
    if (!callbacks) return;
    for (const callback of [...callbacks]) {
      try {
        callback(payload);
      } catch (error) {
        console.error(`A listener of the ${String(event)} event failed:`, error);
      }
    }
  };

  exposed.on = (event: FactoryEventName, callback: (payload: unknown) => void): Unsubscribe => {
    if (typeof callback !== 'function') throw new TypeError('on() needs a callback function');
    // A fresh wrapper per subscription, so subscribing the same function twice needs two unsubscribes.
    const entry = (payload: unknown) => callback(payload);
    let callbacks = subscribers.get(event);
    if (!callbacks) subscribers.set(event, (callbacks = new Set()));
    callbacks.add(entry);
    if (subscriberCount++ === 0) ipcRenderer.on(eventChannel, dispatch);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      callbacks.delete(entry);
      if (callbacks.size === 0) subscribers.delete(event);
      if (--subscriberCount === 0) ipcRenderer.removeListener(eventChannel, dispatch);
    };
  };

  return exposed as unknown as DesktopBridge;
}
