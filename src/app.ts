// Composition: builds the engine and its doors for one data folder. The headless server
// (server.ts) and the desktop app (desktop/main.ts) both start Factory through here.

import type { FactoryApi, Platform } from './core/api';
import { createApi, type DesktopFunctions } from './api';
import { ConfigService } from './engine/config';
import { EventHub } from './engine/events';
import { DataStore } from './store/data-store';

declare const FACTORY_VERSION: string;
/** The application version, set at build time from package.json. */
export const version = typeof FACTORY_VERSION === 'string' ? FACTORY_VERSION : '0.0.0-dev';

export interface StartOptions {
  dataDir: string;
  platform: Platform;
  /** Settings for this start only (command-line flags), applied over the saved ones. */
  overrides?: unknown;
  desktop?: DesktopFunctions;
}

export interface Factory {
  api: FactoryApi;
  dataDir: string;
  /** Stops everything: servers closed, pending writes flushed. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Opens the data folder and starts the engine. Throws (starting nothing) when the data folder
 * cannot be used, e.g. a corrupt config.json: the error names the file and why.
 */
export async function startFactory(options: StartOptions): Promise<Factory> {
  const store = new DataStore(options.dataDir);
  await store.open();
  const config = await ConfigService.open(store, { overrides: options.overrides });
  const events = new EventHub();
  const api = createApi({
    config,
    events,
    dataDir: options.dataDir,
    version,
    platform: options.platform,
    desktop: options.desktop,
  });

  let stopping: Promise<void> | undefined;
  return {
    api,
    dataDir: options.dataDir,
    stop() {
      stopping ??= (async () => {
        api.close();
        await config.idle();
        await store.close();
      })();
      return stopping;
    },
  };
}
