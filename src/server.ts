// Headless entry (npm start): the engine with remote access and the webhook server, no Electron.

import { join } from 'node:path';
import { startFactory, version } from './app';
import { errorMessage } from './core/errors';
import { encodeQr } from './core/qr';
import { qrToTerminal } from './core/qr-text';
import { parseServerArguments, usage, UsageError } from './options';

async function main(): Promise<void> {
  let options;
  try {
    options = parseServerArguments(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(usage);
    return;
  }

  let factory;
  try {
    factory = await startFactory({ dataDir: options.dataDir, platform: 'web', overrides: options.overrides, uiRoot: join(__dirname, 'ui') });
  } catch (error) {
    console.error(`Factory did not start: ${errorMessage(error)}`);
    process.exit(1);
  }

  // Runs until a signal stops it, even with no server listening (--no-remote).
  const keepAlive = setInterval(() => undefined, 2 ** 31 - 1);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(keepAlive);
    try {
      await factory.stop();
      console.log(`Stopped (${signal}).`);
      process.exit(0);
    } catch (error) {
      console.error(`Stopping failed: ${errorMessage(error)}`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  console.log(`Factory ${version}`);
  console.log(`Data: ${factory.dataDir}`);
  const remote = factory.remote.status();
  const link = factory.remote.pairingLink();
  if (link) {
    console.log(`Remote access: ${link}`);
  } else if (remote.error) {
    console.log(`Remote access is not running: ${remote.error}`);
  }
  const { webhookUrl, settings } = await factory.api.snapshot();
  if (webhookUrl) console.log(`Webhooks: ${webhookUrl}/hooks/<trigger-id>`);
  if (link) console.log(`\nScan to sign in from a phone:\n${qrToTerminal(encodeQr(link))}\n${factory.remote.reachNote(settings.remoteAccess.host)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
