// /api/call of a cheap method at 50 connections, against a bare node:http hello-world in the same run.
import { createServer } from 'node:http';
import { startTestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { load, type Load } from './load';

const hello = createServer((_request, response) => {
  response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"result":"hello"}');
});
await new Promise<void>((resolve) => hello.listen(0, '127.0.0.1', resolve));
const helloUrl = `http://127.0.0.1:${(hello.address() as { port: number }).port}/`;

const port = await freePort();
const factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port } } });
const token = new URL(factory.remote.pairingLink()!).searchParams.get('t')!;
const callUrl = `http://127.0.0.1:${port}/api/call/listRuns`;

try {
  const bare = await load(helloUrl);
  const api = await load(callUrl, 'POST', '[{"limit":10}]', `Bearer ${token}`);
  const row = (name: string, result: Load) => console.log(`${name.padEnd(30)} ${result.perSecond.toFixed(0).padStart(8)} req/s   p50 ${result.p50.toFixed(2)} ms   p99 ${result.p99.toFixed(2)} ms   errors ${result.errors}`);
  console.log('50 connections, 5 s each, load generator in its own process (2 cores shared)');
  row('bare node:http hello-world', bare);
  row('POST /api/call/listRuns', api);
  console.log(`ratio ${(api.perSecond / bare.perSecond).toFixed(2)} of the bare server (goal >= 0.7)`);
} finally {
  hello.close();
  await factory.close();
}
