// The headless entry, as a real process: flags, data folder, refusal of a corrupt config, clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultDataDir, parseServerArguments } from '../src/options';
import { freePort, send } from './helpers/net';
import { makeTempDir, removeTempDir, waitFor } from './helpers/temp';

const serverPath = join(process.cwd(), 'dist', 'server.js');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startServer(args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(process.execPath, [serverPath, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

const options = suite('server options');

options('flags override the settings for this start; remote access is on unless --no-remote', () => {
  const parsed = parseServerArguments(['--data', '/tmp/x', '--remote-port', '9001', '--webhooks', '--webhook-host=0.0.0.0', '--webhook-port', '9002'], {});
  assert.is(parsed.dataDir, '/tmp/x');
  assert.equal(parsed.overrides, { remoteAccess: { enabled: true, port: 9001 }, webhookServer: { enabled: true, host: '0.0.0.0', port: 9002 } });
  assert.equal(parseServerArguments(['--no-remote'], {}).overrides.remoteAccess, { enabled: false });
});

options('bad flags are refused with a message that names them', () => {
  assert.throws(() => parseServerArguments(['--remote-port', '0'], {}), /--remote-port takes a port from 1 to 65535, not "0"/);
  assert.throws(() => parseServerArguments(['--webhook-port', 'abc'], {}), /--webhook-port/);
  assert.throws(() => parseServerArguments(['--data'], {}), /--data needs a value/);
  assert.throws(() => parseServerArguments(['--frobnicate'], {}), /Unknown option "--frobnicate"/);
});

options('the data folder comes from FACTORY_DATA_DIR, then XDG_DATA_HOME, then ~/.local/share', () => {
  assert.is(defaultDataDir({ FACTORY_DATA_DIR: '/srv/f', XDG_DATA_HOME: '/x' }), '/srv/f');
  assert.is(defaultDataDir({ XDG_DATA_HOME: '/x' }), '/x/factory');
  assert.match(defaultDataDir({}), /\.local\/share\/factory$/);
});

const server = suite('server process');

server('starts on an empty folder, prints where its data is, and stops cleanly on SIGTERM', async () => {
  const dir = makeTempDir('factory-server');
  try {
    const started = startServer(['--no-remote'], { FACTORY_DATA_DIR: dir });
    await waitFor(() => started.output().includes('Data: '), 10000, 'the data line');
    assert.match(started.output(), new RegExp(`Data: ${dir}`));
    assert.ok(existsSync(join(dir, 'config.json')));
    started.child.kill('SIGTERM');
    const { code } = await started.exited;
    assert.is(code, 0, started.output());
    // Said only by the SIGTERM handler: it was still running when stopped (no sleep needed to show it).
    assert.match(started.output(), /^Stopped \(SIGTERM\)\.$/m, 'still running until stopped');
  } finally {
    removeTempDir(dir);
  }
});

server('with remote access on, prints the sign-in link and the same link as a black-on-white QR code', async () => {
  const dir = makeTempDir('factory-server');
  try {
    const port = await freePort();
    const started = startServer(['--data', dir, '--remote-port', String(port)]);
    await waitFor(() => started.output().includes('\x1b[0m'), 10000, 'the QR code');
    const link = new RegExp(`Remote access: (http://127\\.0\\.0\\.1:${port}/pair\\?t=[A-Za-z0-9_-]{43})`).exec(started.output());
    assert.ok(link, started.output());
    const qrLines = started.output().split('\n').filter((line) => line.startsWith('\x1b[30;47m'));
    assert.ok(qrLines.length > 10, 'the QR code has rows');
    assert.ok(qrLines.every((line) => /^\x1b\[30;47m[█▀▄ ]+\x1b\[0m$/.test(line)));
    const answer = await send(link![1]!);
    assert.is(answer.status, 303, 'the printed link signs in');
    assert.match(started.output(), /works on this machine only[\s\S]*--remote-host 0\.0\.0\.0[\s\S]*anyone on the network[\s\S]*Allowed host names/, 'a loopback link says so, and how to open it to the network');
    started.child.kill('SIGTERM');
    assert.is((await started.exited).code, 0);
  } finally {
    removeTempDir(dir);
  }
});

server('listening on all addresses, the link and QR code use this machine\'s network address', async () => {
  const lan = Object.values(networkInterfaces()).flat().find((address) => address && address.family === 'IPv4' && !address.internal);
  const dir = makeTempDir('factory-server');
  try {
    const port = await freePort();
    const started = startServer(['--data', dir, '--remote-host', '0.0.0.0', '--remote-port', String(port)]);
    await waitFor(() => started.output().includes('\x1b[0m'), 10000, 'the QR code');
    const link = /Remote access: (\S+)/.exec(started.output())![1]!;
    if (lan) {
      assert.is(new URL(link).host, `${lan.address}:${port}`, started.output());
      assert.not.match(started.output(), /this machine only/);
      assert.match(started.output(), /Anyone on your network who has this link/);
      assert.is((await send(link)).status, 303, 'the network address signs in');
    } else {
      assert.match(started.output(), /No network address was found on this machine/);
    }
    started.child.kill('SIGTERM');
    assert.is((await started.exited).code, 0);
  } finally {
    removeTempDir(dir);
  }
});

server('stops with exit code 0 on SIGINT too', async () => {
  const dir = makeTempDir('factory-server');
  try {
    const started = startServer(['--data', dir, '--no-remote']);
    await waitFor(() => started.output().includes('Data: '), 10000, 'the data line');
    started.child.kill('SIGINT');
    assert.is((await started.exited).code, 0);
  } finally {
    removeTempDir(dir);
  }
});

server('refuses to start on a corrupt config.json, names the file, and leaves it untouched', async () => {
  const dir = makeTempDir('factory-server');
  try {
    writeFileSync(join(dir, 'config.json'), '{ "format": 1, oops');
    const started = startServer(['--data', dir, '--no-remote']);
    const { code } = await started.exited;
    assert.is(code, 1);
    assert.match(started.output(), /Factory did not start: .*config\.json/);
    assert.is(readFileSync(join(dir, 'config.json'), 'utf8'), '{ "format": 1, oops');
  } finally {
    removeTempDir(dir);
  }
});

server('an unknown flag exits with code 2 and the usage', async () => {
  const started = startServer(['--nope']);
  assert.is((await started.exited).code, 2);
  assert.match(started.output(), /Unknown option "--nope"[\s\S]*Usage:/);
});

options.run();
server.run();
