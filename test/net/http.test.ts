// The outbound HTTP client against a real server on 127.0.0.1: timeouts, the answer size cap,
// redirects, Retry-After, and secrets kept out of every error.
import { createServer, type Server } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NetworkError, credentialsOf, httpRequest, redactUrl, retryAfterMs, scrub } from '../../src/net/http';
import { freePort } from '../helpers/net';

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function networkError(promise: Promise<unknown>): Promise<NetworkError> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  assert.instance(error, NetworkError);
  return error as NetworkError;
}

const client = suite<{ server: Server; base: string }>('http client');

/** The requests the server holds unanswered (`/hang`), by arrival. */
const hanging: (() => void)[] = [];

client.before.each(async (context) => {
  context.server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://x');
    if (url.pathname === '/hang') return void hanging.push(() => response.end());
    if (url.pathname === '/echo-auth') {
      // A proxy's error page that quotes the credentials in every form it could.
      const authorization = request.headers.authorization ?? '';
      const credentials = authorization.split(' ')[1] ?? '';
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      const token = decoded.slice(decoded.indexOf(':') + 1);
      const lowerEscapes = (text: string) => text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
      const forms = [authorization, credentials, decoded, encodeURIComponent(authorization), lowerEscapes(encodeURIComponent(credentials)), Buffer.from(token).toString('base64'), encodeURIComponent(token), JSON.stringify(request.headers)];
      return void response.writeHead(401, { 'Content-Type': 'text/plain', 'X-Echo': authorization }).end(`Unauthorized: ${forms.join(' | ')}`);
    }
    if (url.pathname === '/slow') return void setTimeout(() => response.end('late'), 2000).unref();
    if (url.pathname === '/big') return void response.end(Buffer.alloc(100_000, 97));
    if (url.pathname === '/redirect') return void response.writeHead(302, { Location: '/elsewhere' }).end();
    if (url.pathname === '/limited') return void response.writeHead(429, { 'Retry-After': '7' }).end('slow down');
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ method: request.method, agent: request.headers['user-agent'], auth: request.headers.authorization, body })));
  });
  await new Promise<void>((resolve) => context.server.listen(0, '127.0.0.1', resolve));
  context.base = `http://127.0.0.1:${(context.server.address() as { port: number }).port}`;
});
client.after.each(async ({ server }) => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

client('sends method, headers and body, names Factory as the user agent, and reads any status', async ({ base }) => {
  const answer = await httpRequest({ url: `${base}/echo`, method: 'POST', headers: { Authorization: 'Bearer tok_123456' }, body: '{"a":1}' });
  assert.is(answer.status, 200);
  assert.equal(JSON.parse(answer.text), { method: 'POST', agent: 'Factory', auth: 'Bearer ***', body: '{"a":1}' }, 'the credentials sent never come back');
  const limited = await httpRequest({ url: `${base}/limited` });
  assert.equal([limited.status, limited.text, retryAfterMs(limited.headers, 0)], [429, 'slow down', 7000]);
});

client('a redirect is answered, not followed', async ({ base }) => {
  const answer = await httpRequest({ url: `${base}/redirect`, method: 'POST', body: 'x' });
  assert.equal([answer.status, answer.headers.get('location')], [302, '/elsewhere']);
});

client('a slow service times out with its name and the time in the error', async ({ base }) => {
  const error = await networkError(httpRequest({ url: `${base}/slow`, timeoutMs: 100, service: 'Linear' }));
  assert.is(error.message, `Linear at ${base.slice(7)} did not answer within 0.1 s\nDetails: GET ${base}/slow`);
});

client('an answer over the cap is an error, or cut there when asked', async ({ base }) => {
  const error = await networkError(httpRequest({ url: `${base}/big`, maxBytes: 1024, service: 'Jira' }));
  assert.is(error.message, 'Jira answered more than 1 KiB; the answer was dropped');
  const cut = await httpRequest({ url: `${base}/big`, maxBytes: 1024, cutAnswer: true });
  assert.is(cut.text.length, 1024);
});

client('an unreachable host is said in words (service, host:port, reason); the redacted URL and exact error are the details', async () => {
  const port = await freePort();
  const error = await networkError(httpRequest({ url: `http://127.0.0.1:${port}/rest/api/3/search?jql=${encodeURIComponent('project = ENG AND updated >= -5m'.repeat(12))}&token=abcdef123456`, method: 'POST', service: 'Jira', secrets: ['abcdef123456'] }));
  assert.is(error.summary, `Couldn't reach Jira at 127.0.0.1:${port} (connection refused)`);
  assert.is(error.message.split('\n')[0], error.summary, 'the words come first, on a line of their own');
  assert.match(error.details, new RegExp(`^POST http://127\\.0\\.0\\.1:${port}/rest/api/3/search\\?jql=project\\+%3D\\+ENG.*&token=\\*\\*\\*: fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`));
  assert.is(error.message, `${error.summary}\nDetails: ${error.details}`);
  assert.not.ok(error.message.includes('abcdef123456'), 'the token stays out of the words and the details');
  assert.ok(error.retryable);
  const unnamed = await networkError(httpRequest({ url: `http://127.0.0.1:${port}/x` }));
  assert.is(unnamed.summary, `Couldn't reach 127.0.0.1:${port} (connection refused)`, 'without a service name, the host alone');
});

client('an answer that echoes the credentials comes back without them, in any form; the user name stays', async ({ base }) => {
  const token = 'ATATT3x/FfGF0+tok=en-42';
  const credentials = Buffer.from(`ada@example.com:${token}`).toString('base64');
  const answer = await httpRequest({ url: `${base}/echo-auth`, headers: { Authorization: `Basic ${credentials}` }, secrets: [token] });
  assert.is(answer.status, 401);
  const leaked = [token, credentials, encodeURIComponent(token), encodeURIComponent(credentials), encodeURIComponent(credentials).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), Buffer.from(token).toString('base64')];
  for (const form of leaked) {
    assert.not.ok(answer.text.includes(form), `the answer holds ${form}: ${answer.text}`);
    assert.not.ok(answer.headers.get('x-echo')!.includes(form), `a header holds ${form}`);
  }
  assert.match(answer.text, /^Unauthorized: Basic \*\*\* \| \*\*\* \| ada@example\.com:\*\*\* \| /);
  assert.is(answer.headers.get('x-echo'), 'Basic ***');
  assert.equal(credentialsOf({ authorization: 'Bearer abc123' }), ['abc123']);
  assert.equal(credentialsOf({ Authorization: 'lin_api_key' }), ['lin_api_key'], 'a bare key is one secret');
  assert.equal(credentialsOf({ 'Content-Type': 'application/json' }), []);
});

client('a request aborted by its caller ends at once, saying so', async ({ base }) => {
  const stopping = new AbortController();
  const request = httpRequest({ url: `${base}/hang`, service: 'GitHub', signal: stopping.signal });
  const settled = networkError(request);
  await waitUntil(() => hanging.length > 0);
  stopping.abort();
  assert.is((await settled).message, 'The request to GitHub was cancelled: Factory is stopping');
  for (const answer of hanging.splice(0)) answer();
});

client('redactUrl hides webhook paths, bot tokens, token queries and user info; scrub removes secrets', () => {
  assert.is(redactUrl('https://hooks.slack.com/services/T0/B0/abc'), 'https://hooks.slack.com/services/***');
  assert.is(redactUrl('https://user:pass@example.com/x?key=k&team=a'), 'https://***@example.com/x?key=***&team=a');
  assert.is(redactUrl('not a url'), '(an invalid URL)');
  assert.is(scrub('key lin_api_1234 and lin_api_12345', ['lin_api_1234', 'lin_api_12345', 'ab']), 'key *** and ***');
});

client.run();
