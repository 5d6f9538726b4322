// The main-process side of the desktop door: one `factory:<method>` handler per method of the one
// method list, refusing any sender but our own window, and the pushed events on one channel.
// Written against small interfaces (IpcMainLike, a send function) so tests drive it with fakes;
// main.ts passes the real `ipcMain` and `webContents.send`.

import type { FactoryApi, FactoryEventName, MethodAnswer, MethodName } from '../core/api';
import { factoryEventNames, methodNames } from '../core/api';
import { errorMessage, withFields } from '../core/errors';
import { invokeMethod } from '../api';

/** The one channel every pushed event travels on, as `{ event, payload }`. */
export const eventChannel = 'factory:event';

/** The message a request from any frame but our window's main frame is rejected with. */
export const refusedMessage = 'Refused: this request did not come from the Factory window';

/** The channel of a method: `factory:<method>`. */
function channelOf(name: MethodName): string {
  return `factory:${name}`;
}

/** What the handlers read of a sender's frame (Electron's WebFrameMain). */
export interface FrameLike {
  url: string;
  top?: unknown;
  parent?: unknown;
}

/** What the handlers read of an invoke event (Electron's IpcMainInvokeEvent). */
export interface IpcEventLike {
  senderFrame: FrameLike | null;
  sender: { id: number };
}

/** The part of Electron's `ipcMain` we use. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcEventLike, ...args: any[]) => unknown): void;
  removeHandler(channel: string): void;
}

/** A pushed event as it travels on `factory:event`. */
export interface EventMessage {
  event: FactoryEventName;
  payload: unknown;
}

/**
 * True when `frame` is a main frame (no parent, or its own top) whose URL is `expectedUrl` itself
 * or `expectedUrl` followed by a query or hash. A destroyed frame (null) is never trusted.
 */
export function isTrustedFrame(frame: FrameLike | null | undefined, expectedUrl: string): boolean {
  if (!frame || typeof frame.url !== 'string') return false;
  const isMainFrame = frame.top === frame || (frame.top === undefined && !frame.parent);
  if (!isMainFrame || frame.parent) return false;
  if (!frame.url.startsWith(expectedUrl)) return false;
  const rest = frame.url.slice(expectedUrl.length);
  return rest === '' || rest.startsWith('?') || rest.startsWith('#');
}

/**
 * Calls a method for the renderer through the one dispatcher (src/api.ts `invokeMethod`) and
 * resolves with its answer: `{ ok: true, value }`, or `{ ok: false, error, fields? }` with the
 * message the renderer shows and the field paths of refused input. Electron would carry only the
 * message of a thrown error, so a failure is answered, not thrown.
 */
export async function callFromRenderer(api: FactoryApi, name: MethodName, args: unknown): Promise<MethodAnswer> {
  try {
    return { ok: true, value: await invokeMethod(api, name, args) };
  } catch (error) {
    return withFields({ ok: false as const, error: errorMessage(error) }, error);
  }
}

/**
 * Registers `factory:<method>` for every method of the list (desktop-only ones included). A request
 * for which `isOurFrame` is false is refused before the api is touched. Returns a function that
 * removes every handler again.
 */
export function registerIpc(ipcMain: IpcMainLike, api: FactoryApi, isOurFrame: (event: IpcEventLike) => boolean): () => void {
  for (const name of methodNames) {
    ipcMain.handle(channelOf(name), (event, ...args: unknown[]) => {
      if (!isOurFrame(event)) throw new Error(refusedMessage);
      return callFromRenderer(api, name, args);
    });
  }
  return () => {
    for (const name of methodNames) ipcMain.removeHandler(channelOf(name));
  };
}

/**
 * Subscribes to every event of the API (navigate included) and sends each on `factory:event` as
 * `{ event, payload }`. Returns a function that ends every subscription.
 */
export function forwardEvents(api: Pick<FactoryApi, 'on'>, send: (channel: string, payload: EventMessage) => void): () => void {
  const unsubscribes = factoryEventNames.map((event) => api.on(event, (payload: unknown) => send(eventChannel, { event, payload })));
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
