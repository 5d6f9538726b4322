import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server';
import { contentSecurityPolicy, createStaticHandler } from '../../src/http/static';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const files = suite('static');

const secret = 'TOP-SECRET-CONTENT';
let temp: string;
let server: RunningHttpServer;

files.before(async () => {
  temp = makeTempDir('factory-static');
  const root = join(temp, 'ui');
  mkdirSync(join(root, 'sub'), { recursive: true });
  const contents: Record<string, string> = {
    'index.html': '<!doctype html><title>Factory</title>',
    'app.js': 'console.log(1)',
    'style.css': 'body{}',
    'icon.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
    'logo.png': 'png',
    'favicon.ico': 'ico',
    'data.json': '{}',
    'app.js.map': '{}',
    'notes.txt': 'notes',
    'site.webmanifest': '{}',
    'my file.txt': 'spaced',
    'sub/page.html': '<p>sub</p>',
    '.env': secret,
  };
  for (const [name, text] of Object.entries(contents)) writeFileSync(join(root, name), text);
  writeFileSync(join(temp, 'secret.txt'), secret);
  writeFileSync(join(temp, 'package.json'), secret);
  mkdirSync(join(temp, 'outside'));
  writeFileSync(join(temp, 'outside', 'secret.txt'), secret);
  symlinkSync(join(temp, 'secret.txt'), join(root, 'leak.txt'));
  symlinkSync(join(temp, 'outside'), join(root, 'outside'));
  symlinkSync(join(root, 'notes.txt'), join(root, 'inner-link.txt'));
  const serve = createStaticHandler({ root, headers: { 'X-Extra': 'yes' } });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, handler: serve });
});
files.after(async () => {
  await server.close();
  removeTempDir(temp);
});

/** Sends `path` exactly as written (fetch would normalise it) and returns the raw answer. */
function rawGet(path: string, method = 'GET'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }));
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

files('serves index.html at / with the security headers', async () => {
  const response = await fetch(server.url + '/');
  assert.is(response.status, 200);
  assert.is(await response.text(), '<!doctype html><title>Factory</title>');
  assert.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.is(response.headers.get('content-security-policy'), contentSecurityPolicy);
  assert.match(contentSecurityPolicy, /frame-ancestors 'none'/);
  assert.is(response.headers.get('x-content-type-options'), 'nosniff');
  assert.is(response.headers.get('referrer-policy'), 'no-referrer');
  assert.is(response.headers.get('x-extra'), 'yes');
});

files('names the content type of each kind of file', async () => {
  const expected: Record<string, string> = {
    '/index.html': 'text/html; charset=utf-8',
    '/app.js': 'text/javascript; charset=utf-8',
    '/style.css': 'text/css; charset=utf-8',
    '/icon.svg': 'image/svg+xml; charset=utf-8',
    '/logo.png': 'image/png',
    '/favicon.ico': 'image/x-icon',
    '/data.json': 'application/json; charset=utf-8',
    '/app.js.map': 'application/json; charset=utf-8',
    '/notes.txt': 'text/plain; charset=utf-8',
    '/site.webmanifest': 'application/manifest+json; charset=utf-8',
    '/sub/page.html': 'text/html; charset=utf-8',
    '/my%20file.txt': 'text/plain; charset=utf-8',
    '/inner-link.txt': 'text/plain; charset=utf-8',
  };
  for (const [path, type] of Object.entries(expected)) {
    const response = await fetch(server.url + path + '?v=1');
    await response.arrayBuffer();
    assert.is(response.status, 200, path);
    assert.is(response.headers.get('content-type'), type, path);
  }
});

files('answers HEAD with the headers only', async () => {
  const { status, text } = await rawGet('/app.js', 'HEAD');
  assert.is(status, 200);
  assert.match(text, /\r\nContent-Length: 14\r\n/i);
  assert.ok(text.endsWith('\r\n\r\n'), 'no body');
});

files('answers 304 to a matching If-None-Match', async () => {
  const first = await fetch(server.url + '/app.js');
  await first.text();
  const etag = first.headers.get('etag')!;
  assert.ok(etag);
  const second = await fetch(server.url + '/app.js', { headers: { 'If-None-Match': etag } });
  assert.is(second.status, 304);
  assert.is(await second.text(), '');
});

files('never serves anything outside the root', async () => {
  const corpus = [
    '/../etc/passwd', '/../../../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/%2E%2E/secret.txt', '/.%2e/secret.txt',
    '/..%2fpackage.json', '/..%2Fsecret.txt', '/%2e%2e%2fsecret.txt', '/%2e%2e%5cx', '/..%5csecret.txt', '/..\\secret.txt',
    '//etc/passwd', '/%2fetc%2fpasswd', '/%5cetc%5cpasswd', '/index.html%00.png', '/%00', '/leak.txt', '/outside/secret.txt',
    '/sub/../../secret.txt', '/sub/%2e%2e/%2e%2e/secret.txt', '/.env', '/C:%5cWindows', '/%', '/%zz', '/%E0%A4%A',
    'http://127.0.0.1/../secret.txt', '*',
  ];
  for (const path of corpus) {
    const { status, text } = await rawGet(path);
    assert.ok(status === 404 || status === 400, `${path} answered ${status}`);
    assert.not.ok(text.includes(secret) || text.includes('root:'), `${path} leaked a file`);
  }
});

files('answers directories and missing files with 404', async () => {
  for (const path of ['/sub', '/sub/', '/missing.js', '/index.html/']) {
    const response = await fetch(server.url + path);
    assert.is(response.status, 404, path);
    assert.equal(await response.json(), { error: 'not found' });
  }
});

files('takes only GET and HEAD', async () => {
  const response = await fetch(server.url + '/index.html', { method: 'POST', body: 'x' });
  assert.is(response.status, 405);
  assert.is(response.headers.get('allow'), 'GET, HEAD');
});

files('answers 404 while the root does not exist yet', async () => {
  const missing = createStaticHandler({ root: join(temp, 'not-built') });
  const other = await startHttpServer({ host: '127.0.0.1', port: 0, handler: missing });
  try {
    const response = await fetch(other.url + '/');
    assert.is(response.status, 404);
  } finally {
    await other.close();
  }
});

files.run();
