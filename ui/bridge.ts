// The web face's `window.factory`: FactoryApi over remote access. Every method is
// `POST /api/call/<method>` with a JSON array of the arguments; events come from one
// EventSource on /api/events, which reconnects by itself (with Last-Event-ID). After a gap the
// server sends a fresh `snapshot` event, so the UI catches up without a reload.

import type { FactoryApi, FactoryEventName, FactoryEvents, FieldMessage } from '../src/core/api';
import { CallError, readFields } from './call-error';

/**
 * A call the server refused: the answer's `error` in words and its `fields` (refused input);
 * `status` 401 means the browser is not signed in.
 */
class RemoteError extends CallError {
  override name = 'RemoteError';
  constructor(message: string, readonly status: number, fields: FieldMessage[] = []) {
    super(message, fields);
  }
}

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'signed-out';

interface WebBridge {
  api: FactoryApi;
  onConnection(listener: (state: ConnectionState) => void): void;
}

const eventNames: FactoryEventName[] = ['run', 'run-deleted', 'logs', 'inbox', 'snapshot'];

export function createWebBridge(): WebBridge {
  const listeners = new Map<FactoryEventName, Set<(payload: never) => void>>();
  const connectionListeners = new Set<(state: ConnectionState) => void>();
  let source: EventSource | undefined;
  let state: ConnectionState = 'connecting';
  let retryTimer: number | undefined;
  let retryDelay = 1000;

  const setState = (next: ConnectionState) => {
    if (state === next) return;
    state = next;
    for (const listener of connectionListeners) listener(next);
  };

  async function call(method: string, args: unknown[]): Promise<unknown> {
    while (args.length > 0 && args[args.length - 1] === undefined) args = args.slice(0, -1);
    let response: Response;
    try {
      response = await fetch(`/api/call/${encodeURIComponent(method)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(args.map((value) => (value === undefined ? null : value))),
        credentials: 'same-origin',
      });
    } catch {
      throw new RemoteError('Factory cannot be reached: check the connection', 0);
    }
    let body: { result?: unknown; error?: string; fields?: unknown } = {};
    try {
      body = await response.json();
    } catch {
      // An answer without JSON: reported by status below.
    }
    if (response.status === 401) setState('signed-out');
    if (!response.ok) throw new RemoteError(body.error ?? `The call failed (HTTP ${response.status})`, response.status, readFields(body.fields));
    return body.result ?? undefined;
  }

  function connect(): void {
    if (source || state === 'signed-out') return;
    source = new EventSource('/api/events');
    source.onopen = () => {
      retryDelay = 1000;
      setState('open');
    };
    for (const name of eventNames) {
      source.addEventListener(name, (event) => {
        let payload: unknown;
        try {
          payload = JSON.parse((event as MessageEvent<string>).data);
        } catch {
          return;
        }
        for (const listener of listeners.get(name) ?? []) listener(payload as never);
      });
    }
    source.onerror = () => {
      // EventSource retries by itself unless the server refused (401 closes it): then we probe.
      if (source?.readyState === EventSource.CLOSED) {
        source = undefined;
        setState('reconnecting');
        window.clearTimeout(retryTimer);
        retryTimer = window.setTimeout(() => {
          call('snapshot', []).then(
            (snapshot) => {
              for (const listener of listeners.get('snapshot') ?? []) listener(snapshot as never);
              connect();
            },
            () => {
              retryDelay = Math.min(retryDelay * 2, 30_000);
              if (state !== 'signed-out') connect();
            },
          );
        }, retryDelay);
      } else {
        setState('reconnecting');
      }
    };
  }

  const api = new Proxy({} as FactoryApi, {
    get(_target, property) {
      if (property === 'platform') return 'web';
      if (property === 'on') {
        return <E extends FactoryEventName>(event: E, callback: (payload: FactoryEvents[E]) => void) => {
          let set = listeners.get(event);
          if (!set) listeners.set(event, (set = new Set()));
          set.add(callback as (payload: never) => void);
          connect();
          return () => set!.delete(callback as (payload: never) => void);
        };
      }
      if (property === 'openExternal') {
        return async (url: string) => {
          if (!/^https?:\/\//i.test(url)) throw new RemoteError('Only http and https links can be opened', 400);
          window.open(url, '_blank', 'noopener,noreferrer');
        };
      }
      if (typeof property !== 'string') return undefined;
      return (...args: unknown[]) => call(property, args);
    },
  });

  return {
    api,
    onConnection(listener) {
      connectionListeners.add(listener);
      listener(state);
    },
  };
}
