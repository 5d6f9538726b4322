// Headless entry (npm start): the engine with remote access and the webhook server, no Electron.

import { join } from 'node:path';
import { startFactory, version } from './app';
import { errorMessage } from './core/errors';
import { encodeQr } from './core/qr';
import { qrToTerminal } from './core/qr-text';
import { hostName, isLoopbackHost } from './http/auth';
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
  if (link) console.log(`\nScan to sign in from a phone:\n${qrToTerminal(encodeQr(link))}\n${reachNote(settings.remoteAccess.host, link)}`);
}

/** Under the QR code: whether a phone can open the link, and how to make it so. */
function reachNote(listenHost: string, link: string): string {
  if (!isLoopbackHost(hostName(new URL(link).host) ?? '')) return 'Anyone on your network who has this link can use Factory: share it with no one.';
  if (!isLoopbackHost(listenHost)) return 'No network address was found on this machine: the link works on this machine only.';
  return [
    `This link works on this machine only: remote access listens on ${listenHost}.`,
    'To sign in from a phone on your network, start with --remote-host 0.0.0.0. Then anyone on the network',
    'who has the link can use Factory (the link is the key: share it with no one).',
    'Through a tunnel, add its host name under Settings → Remote access → Allowed host names.',
  ].join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
