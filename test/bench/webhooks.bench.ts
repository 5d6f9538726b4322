// Webhook deliveries per second at 50 connections, each with a unique key (so each is a durable
// new run), against a bare node:http hello-world in the same run.
import { createServer } from 'node:http';
import { approval, startTestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { load, type Load } from './load';

const hello = createServer((_request, response) => {
  response.writeHead(201, { 'Content-Type': 'application/json' }).end('{"issue":"x","created":true}');
});
await new Promise<void>((resolve) => hello.listen(0, '127.0.0.1', resolve));
const helloUrl = `http://127.0.0.1:${(hello.address() as { port: number }).port}/`;

const port = await freePort();
const factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } } });
const pipeline = await factory.pipeline([approval('gate', 'Go?')]);
const trigger = await factory.api.saveTrigger({ name: 'Bench', kind: 'webhook', enabled: true, pipelineId: pipeline.id, webhookSecret: '' });

try {
  const bare = await load(helloUrl);
  // No key in the body: every delivery gets a fresh HOOK-<time> key, so each one is a new durable run.
  const hooks = await load(`http://127.0.0.1:${port}/hooks/${trigger.id}`, 'POST', '{"title":"Load test issue"}');
  const row = (name: string, result: Load) => console.log(`${name.padEnd(34)} ${result.perSecond.toFixed(0).padStart(7)} req/s   p50 ${result.p50.toFixed(2)} ms   p99 ${result.p99.toFixed(2)} ms   non-2xx ${result.errors}`);
  console.log('50 connections, 5 s each, load generator in its own process (2 cores shared)');
  row('bare node:http hello-world', bare);
  row('POST /hooks/<id> (new durable run)', hooks);
  console.log(`ratio ${(hooks.perSecond / bare.perSecond).toFixed(2)} of the bare server (goal >= 0.5, p99 < 50 ms)`);
  console.log(`runs created: ${(await factory.api.listRuns({ limit: 10_000 })).length}${hooks.requests > 10_000 ? '+' : ''}`);
} finally {
  hello.close();
  await factory.close();
}
