import type { IncomingMessage, ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MethodNotAllowedError, NotFoundHttpError, sendJson } from '../../src/http/respond';
import { compilePattern, createRouter, type Route } from '../../src/http/router';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server';

const router = suite('router');

interface Context {
  name: string;
}

const echo = (label: string): Route<Context>['handler'] => (_request, response, params, context, url) =>
  sendJson(response, 200, { label, params, context: context.name, query: Object.fromEntries(url.searchParams) });

const routes: Route<Context>[] = [
  { method: 'GET', pattern: '/health', handler: echo('health') },
  { method: 'POST', pattern: '/api/call/:method', handler: echo('call') },
  { method: 'POST', pattern: '/hooks/:id', trailingSlash: true, handler: echo('hook') },
  { method: 'GET', pattern: '/runs/:runId/steps/:stepId', handler: echo('step') },
  { method: 'GET', pattern: '/files.json', handler: echo('dotted') },
  { method: 'PUT', pattern: '/health', handler: echo('put-health') },
];

let server: RunningHttpServer;
const misses: { path: string; allowedMethods: string[] }[] = [];

router.before(async () => {
  const route = createRouter<Context>(routes, (_request: IncomingMessage, _response: ServerResponse, _context, miss) => {
    misses.push({ path: miss.url.pathname, allowedMethods: miss.allowedMethods });
    if (miss.allowedMethods.length > 0) throw new MethodNotAllowedError(miss.allowedMethods);
    throw new NotFoundHttpError('not found');
  });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, handler: (request, response) => route(request, response, { name: 'ctx' }) });
});
router.after(() => server.close());
router.before.each(() => {
  misses.length = 0;
});

async function call(path: string, method = 'GET'): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(server.url + path, { method });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

router('matches a literal path and passes the context', async () => {
  const { status, body } = await call('/health');
  assert.is(status, 200);
  assert.equal(body, { label: 'health', params: {}, context: 'ctx', query: {} });
});

router('fills named parameters, percent-decoded', async () => {
  const { body } = await call('/api/call/listRuns', 'POST');
  assert.equal(body.params, { method: 'listRuns' });
  const step = await call('/runs/run_1/steps/build%20it', 'GET');
  assert.equal(step.body.params, { runId: 'run_1', stepId: 'build it' });
  const slash = await call('/hooks/a%2Fb', 'POST');
  assert.equal(slash.body.params, { id: 'a/b' }, 'an encoded slash stays inside one segment');
});

router('answers a malformed percent-escape with 400, not a crash', async () => {
  const { status, body } = await call('/hooks/%E0%A4%A', 'POST');
  assert.is(status, 400);
  assert.match(body.error, /Malformed percent-encoding/);
  assert.is((await call('/health')).status, 200, 'the server still serves');
});

router('ignores the query string for matching and hands it to the handler', async () => {
  const { status, body } = await call('/hooks/trg_1?token=s%20ecret&x=1', 'POST');
  assert.is(status, 200);
  assert.equal(body.params, { id: 'trg_1' });
  assert.equal(body.query, { token: 's ecret', x: '1' });
});

router('takes a trailing slash only where the route allows it', async () => {
  assert.equal((await call('/hooks/trg_1/', 'POST')).body.params, { id: 'trg_1' });
  assert.is((await call('/health/')).status, 404);
  assert.is((await call('/hooks/', 'POST')).status, 404, 'a parameter is never empty');
  assert.is((await call('/hooks/a/b', 'POST')).status, 404, 'a parameter is one segment');
});

router('patterns are anchored and literal', async () => {
  assert.is((await call('/health/x')).status, 404);
  assert.is((await call('/x/health')).status, 404);
  assert.is((await call('/filesXjson')).status, 404, 'a dot in a pattern is not a wildcard');
  assert.is((await call('/files.json')).status, 200);
});

router('sends an unknown path to the fallback with no allowed methods', async () => {
  const { status, body } = await call('/nowhere?x=1', 'DELETE');
  assert.is(status, 404);
  assert.equal(body, { error: 'not found' });
  assert.equal(misses, [{ path: '/nowhere', allowedMethods: [] }]);
});

router('tells the fallback which methods a known path takes', async () => {
  const { status, headers } = await call('/health', 'POST');
  assert.is(status, 405);
  assert.is(headers.get('allow'), 'GET, PUT');
  assert.equal(misses, [{ path: '/health', allowedMethods: ['GET', 'PUT'] }]);
  assert.is((await call('/hooks/trg_1', 'GET')).status, 405);
});

router('refuses malformed patterns when the router is made', () => {
  assert.throws(() => compilePattern('health'), /does not start with \//);
  assert.throws(() => compilePattern('/a/:'), /bad or repeated parameter/);
  assert.throws(() => compilePattern('/a/:x-y'), /bad or repeated parameter/);
  assert.throws(() => compilePattern('/a/:id/b/:id'), /bad or repeated parameter/);
  assert.is(compilePattern('/').regexp.test('/'), true);
  assert.is(compilePattern('/', true).regexp.test('//'), false);
});

router.run();
