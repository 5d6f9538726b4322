// One HTTP server that follows its settings: started, stopped, or restarted on a new host or
// port. Used by remote access and by the webhook server.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerSettings } from '../core/api';
import { errorMessage } from '../core/errors';
import { startHttpServer } from './server';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

interface ManagedServerOptions {
  /** What it is called in logs ("Webhook server"). */
  name: string;
  /** The URL to show for a listening server (default: the bound URL). */
  publicUrl?: (settings: ServerSettings, boundUrl: string) => string;
  /** Called when an enabled server cannot listen, with error()'s text and the port. A throw is logged. */
  onStartFailed?: (message: string, port: number) => void;
  /** Called just before a running server closes (to end long-lived streams). */
  beforeClose?: () => void;
}

export class ManagedServer {
  private running: { close(): Promise<void>; settings: ServerSettings; url: string } | undefined;
  private failure: string | undefined;
  private wanted = false;
  /** apply and stop run one at a time, so two quick saves never leave two servers listening. */
  private queue: Promise<void> = Promise.resolve();
  private handler: RequestHandler | undefined;

  constructor(private readonly options: ManagedServerOptions) {}

  /** What answers its requests; given once the API it serves exists, before the first `apply`. */
  handleWith(handler: RequestHandler): void {
    this.handler = handler;
  }

  /**
   * Brings the server in line with the settings (the same address keeps the running server).
   * Never rejects: a server that cannot listen is reported by error() and onStartFailed.
   */
  apply(settings: ServerSettings): Promise<void> {
    return this.enqueue(async () => {
      this.wanted = settings.enabled;
      const current = this.running?.settings;
      if (current && settings.enabled && current.host === settings.host && current.port === settings.port) return;
      await this.close();
      this.failure = undefined;
      if (!settings.enabled) return;
      const handler = this.handler;
      if (!handler) throw new Error(`${this.options.name}: apply before handleWith`);
      try {
        const server = await startHttpServer({ host: settings.host, port: settings.port, handler });
        const url = this.options.publicUrl?.(settings, server.url) ?? server.url;
        this.running = { close: () => server.close(), settings: { ...settings }, url };
      } catch (error) {
        this.failure = errorMessage(error);
        try {
          this.options.onStartFailed?.(this.failure, settings.port);
        } catch (reportError) {
          console.error(`${this.options.name}: reporting that it could not start failed:`, reportError);
        }
      }
    });
  }

  /** Stops listening and drops open connections; error() is cleared. */
  stop(): Promise<void> {
    return this.enqueue(async () => {
      await this.close();
      this.failure = undefined;
    });
  }

  /** True when the settings ask for the server (whether or not it could start). */
  get enabled(): boolean {
    return this.wanted;
  }

  /** The listening base URL, or null when not running. */
  url(): string | null {
    return this.running?.url ?? null;
  }

  /** Why the server is not running although enabled; undefined otherwise. */
  error(): string | undefined {
    return this.failure;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task);
    this.queue = next.catch((error) => console.error(`${this.options.name}: changing its state failed:`, error));
    return next;
  }

  private async close(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    if (running) {
      this.options.beforeClose?.();
      await running.close();
    }
  }
}
