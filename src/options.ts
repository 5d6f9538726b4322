// The headless server's command line (DESIGN §6).

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SettingsInput } from './core/api';

interface ServerOptions {
  dataDir: string;
  /** Settings for this start only. */
  overrides: SettingsInput;
  help: boolean;
}

export const usage = `Usage: node dist/server.js [options]

  --data DIR           data folder (default $FACTORY_DATA_DIR, $XDG_DATA_HOME/factory or ~/.local/share/factory)
  --remote-host H      remote access listen address (default 127.0.0.1)
  --remote-port N      remote access port (default 7718)
  --no-remote          do not switch remote access on
  --webhooks           switch the webhook server on
  --webhook-host H     webhook server listen address (default 127.0.0.1)
  --webhook-port N     webhook server port (default 7717)
  --help               this text`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The default data folder: $FACTORY_DATA_DIR, else $XDG_DATA_HOME/factory, else ~/.local/share/factory. */
export function defaultDataDir(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.FACTORY_DATA_DIR) return resolve(environment.FACTORY_DATA_DIR);
  if (environment.XDG_DATA_HOME) return join(resolve(environment.XDG_DATA_HOME), 'factory');
  return join(homedir(), '.local', 'share', 'factory');
}

function readPort(flag: string, value: string | undefined): number {
  const port = Number(value);
  if (!value || !/^\d+$/.test(value) || port < 1 || port > 65535) throw new UsageError(`${flag} takes a port from 1 to 65535, not ${JSON.stringify(value ?? '')}`);
  return port;
}

function readValue(flag: string, value: string | undefined): string {
  if (value === undefined || value === '' || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
  return value;
}

/** Parses the arguments after `node dist/server.js`. Throws UsageError on anything unknown. */
export function parseServerArguments(argv: readonly string[], environment: NodeJS.ProcessEnv = process.env): ServerOptions {
  const remote: NonNullable<SettingsInput['remoteAccess']> = { enabled: true };
  const webhooks: NonNullable<SettingsInput['webhookServer']> = {};
  let dataDir = defaultDataDir(environment);
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const [flag, inline] = argv[index]!.includes('=') ? argv[index]!.split(/=(.*)/s, 2) as [string, string] : [argv[index]!, undefined];
    const next = () => inline ?? argv[++index];
    switch (flag) {
      case '--data': dataDir = resolve(readValue(flag, next())); break;
      case '--remote-host': remote.host = readValue(flag, next()); break;
      case '--remote-port': remote.port = readPort(flag, next()); break;
      case '--no-remote': remote.enabled = false; break;
      case '--webhooks': webhooks.enabled = true; break;
      case '--webhook-host': webhooks.host = readValue(flag, next()); break;
      case '--webhook-port': webhooks.port = readPort(flag, next()); break;
      case '--help': case '-h': help = true; break;
      default: throw new UsageError(`Unknown option ${JSON.stringify(argv[index])}`);
    }
  }
  return { dataDir, overrides: { remoteAccess: remote, webhookServer: webhooks }, help };
}
