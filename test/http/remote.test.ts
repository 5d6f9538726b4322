// Remote access end to end: the real server on a free port, real HTTP and a real SSE reader.
import { statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RemoteAuth, inviteLifetimeMs, type RemoteState } from '../../src/http/auth';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort, send } from '../helpers/net';
import { connectEventStream } from '../helpers/sse-client';
import { waitFor } from '../helpers/temp';

interface Context {
  factory: TestFactory;
  base: string;
  token: string;
}

const remote = suite<Context>('remote access');

remote.before.each(async (context) => {
  const port = await freePort();
  context.factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port } } });
  context.base = `http://127.0.0.1:${port}`;
  context.token = new URL(context.factory.remote.pairingLink()!).searchParams.get('t')!;
});
remote.after.each(async (context) => {
  await context.factory.close();
});

function call(base: string, method: string, args: unknown[] | string, headers: Record<string, string> = {}) {
  return send(`${base}/api/call/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof args === 'string' ? args : JSON.stringify(args),
  });
}
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function pair(base: string, token: string): Promise<string> {
  const answer = await send(`${base}/pair?t=${encodeURIComponent(token)}`);
  assert.is(answer.status, 303);
  return String(answer.headers['set-cookie']).split(';')[0]!;
}

remote('the snapshot shows remote access running with its URL', async ({ factory, base }) => {
  const { remote: status } = await factory.api.snapshot();
  assert.equal(status, { enabled: true, running: true, url: base });
  assert.match(factory.remote.pairingLink()!, new RegExp(`^${base}/pair\\?t=[A-Za-z0-9_-]{43}$`));
});

remote('a whole log downloads as text with a token or the session cookie, and not without', async ({ factory, base, token }) => {
  const pipeline = await factory.pipeline([shell('count', 'seq 1 5000; echo "done" >&2')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['succeeded']);
  const url = `${base}/api/log/${run.id}/count/1`;
  assert.is((await send(url)).status, 401, 'not signed in');
  const answer = await send(url, { headers: bearer(token) });
  assert.is(answer.status, 200);
  assert.match(String(answer.headers['content-type']), /^text\/plain/);
  assert.match(String(answer.headers['content-disposition']), /^attachment; filename="run_\w+-count-1\.log"$/);
  const lines = answer.text.trimEnd().split('\n');
  assert.is(lines.filter((line) => /^\d+$/.test(line)).length, 5000, 'every line, not a page');
  assert.ok(lines.includes('done'));
  const cookie = await pair(base, token);
  assert.is((await send(`${base}/api/log/${run.id}/_setup/0`, { headers: { Cookie: cookie } })).status, 404, 'no setup log for a project used as it is');
  assert.is((await send(`${base}/api/log/${run.id}/nope/1`, { headers: bearer(token) })).status, 404);
  assert.is((await send(`${base}/api/log/run_x/count/1`, { headers: bearer(token) })).status, 404);
});

remote('the error table: 200, 400, 401, 403, 404, 413 and 415', async ({ base, token }) => {
  const ok = await call(base, 'snapshot', [], bearer(token));
  assert.is(ok.status, 200);
  assert.ok(ok.json().result.pipelines.length > 0);
  const nothing = await call(base, 'markInboxRead', [null], bearer(token));
  assert.equal([nothing.status, nothing.json()], [200, { result: null }]);
  const threw = await call(base, 'deleteProject', ['prj_0000000000000000'], bearer(token));
  assert.equal([threw.status, threw.json()], [400, { error: 'No project with id `prj_0000000000000000`' }]);
  assert.is((await call(base, 'snapshot', '{"not":"an array"}', bearer(token))).status, 400);
  assert.is((await call(base, 'snapshot', '[1,', bearer(token))).status, 400);
  assert.equal((await call(base, 'snapshot', [])).json(), { error: 'Not signed in' });
  assert.is((await call(base, 'snapshot', [])).status, 401);
  const desktop = await call(base, 'remotePairing', [], bearer(token));
  assert.equal([desktop.status, desktop.json()], [403, { error: 'remotePairing is only available on the desktop' }]);
  assert.is((await call(base, 'noSuchMethod', [], bearer(token))).status, 404);
  assert.is((await call(base, 'toString', [], bearer(token))).status, 404);
  const wrongType = await send(`${base}/api/call/snapshot`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'text/plain' }, body: '[]' });
  assert.equal([wrongType.status, wrongType.json()], [415, { error: 'Expected JSON' }]);
  const huge = await call(base, 'importPipeline', JSON.stringify(['x'.repeat(2 * 1024 * 1024)]), bearer(token)).catch((error: Error) => ({ status: 413, error }));
  assert.is(huge.status, 413);
  assert.is((await call(base, 'getRun', ['a', 'b', 'c'], bearer(token))).status, 400);
});

remote('a refused pipeline is answered 400 with its problems in words, without field paths', async ({ factory, base, token }) => {
  const bad = { projectId: factory.projectId, name: 'x', variables: {}, steps: [{ id: 'ok', name: 'Ok', kind: 'shell', command: 'true' }, { id: 'Bad Id!', name: 'B', kind: 'shell', command: 'true' }] };
  const answer = await call(base, 'savePipeline', [bad], bearer(token));
  const problem = 'Step 2: the id `Bad Id!` may use only a–z, 0–9, - and _, starting with a letter (at most 40)';
  assert.equal([answer.status, answer.json()], [400, { error: problem, fields: [{ field: 'steps.#2.id', message: problem }] }]);
});

/** No line of an answer's words starts with a field path such as `remoteAccess.allowedHosts:` or `filter.repo:`. */
function assertWordsOnly(error: string): void {
  for (const line of error.split('\n')) assert.not.match(line, /^[a-z][\w.#-]*(?: [\w.#-]+)?: /, `a path before the words: ${line}`);
}

remote('refused settings, triggers and projects are answered 400 in words, with the field paths in `fields`', async ({ factory, base, token }) => {
  const settings = await call(base, 'saveSettings', [{ remoteAccess: { allowedHosts: ['not a host!'] } }], bearer(token));
  const hosts = 'The allowed host names must be a list of names such as factory.example.com, not `["not a host!"]`';
  assert.equal([settings.status, settings.json()], [400, { error: `Settings not saved:\n${hosts}`, fields: [{ field: 'remoteAccess.allowedHosts', message: hosts }] }]);

  const trigger = await call(base, 'saveTrigger', [{ name: 'Bugs', kind: 'github', pipelineId: 'pl_none', filter: { repo: 5 } }], bearer(token));
  assert.is(trigger.status, 400);
  const { error, fields } = trigger.json() as { error: string; fields: { field: string; message: string }[] };
  assertWordsOnly(error);
  assert.not.match(error, /filter\.|pipelineId|connectionId/);
  assert.match(error, /^The repository filter must be text, not `5`$/m);
  assert.equal(fields.map((problem) => problem.field), ['pipelineId', 'connectionId', 'filter.repo']);

  const project = await call(base, 'saveProject', [{ name: 'Gone', path: '/no/such/folder/here' }], bearer(token));
  assert.equal([project.status, project.json()], [400, {
    error: 'Project not saved:\nThe folder `/no/such/folder/here` does not exist: choose an existing folder',
    fields: [{ field: 'path', message: 'The folder `/no/such/folder/here` does not exist: choose an existing folder' }],
  }]);
  assert.equal((await factory.api.snapshot()).settings.remoteAccess.allowedHosts, [], 'nothing was saved');
});

remote('pairing sets a locked-down session cookie and redirects home, to what waits', async ({ base, token }) => {
  const answer = await send(`${base}/pair?t=${token}`);
  assert.is(answer.status, 303);
  assert.is(answer.headers.location, '/#/waiting');
  assert.is(answer.headers['cache-control'], 'no-store');
  assert.is(answer.headers['referrer-policy'], 'no-referrer');
  const cookie = String(answer.headers['set-cookie']);
  assert.match(cookie, /^factory_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/);
  assert.not.match(cookie, /Domain/i);
  assert.is((await send(`${base}/pair?t=wrong`)).status, 401);
  assert.is((await send(`${base}/pair`)).status, 401);
});

remote('the auth matrix', async ({ factory, base, token }) => {
  const origin = { Origin: base };
  assert.is((await call(base, 'snapshot', [])).status, 401, 'no auth');
  assert.is((await call(base, 'snapshot', [], bearer('nope'))).status, 401, 'bad bearer');
  assert.is((await call(base, 'snapshot', [], bearer(''))).status, 401, 'empty bearer');
  assert.is((await call(base, 'snapshot', [], bearer('x'.repeat(6000)))).status, 401, 'huge bearer');
  assert.is((await call(base, 'snapshot', [], bearer(token))).status, 200, 'good bearer');
  const cookie = await pair(base, token);
  assert.is((await call(base, 'snapshot', [], { Cookie: cookie, ...origin })).status, 200, 'cookie from /pair');
  assert.is((await call(base, 'snapshot', [], { Cookie: cookie })).status, 401, 'cookie POST without Origin');
  assert.is((await call(base, 'snapshot', [], { Cookie: cookie, Origin: 'http://127.0.0.1:9' })).status, 401, 'cookie with a foreign Origin');
  assert.is((await call(base, 'snapshot', [], { Cookie: cookie, ...origin, 'Sec-Fetch-Site': 'cross-site' })).status, 401, 'cross-site fetch');
  assert.is((await call(base, 'snapshot', [], { Cookie: 'factory_session=forged', ...origin })).status, 401, 'forged cookie');
  const rebinding = await call(base, 'snapshot', [], { ...bearer(token), Host: 'evil.example.com' });
  assert.is(rebinding.status, 403, 'bad Host');
  assert.is((await send(`${base}/`, { headers: { Host: 'evil.example.com' } })).status, 403, 'bad Host on static files too');
  await factory.api.saveSettings({ remoteAccess: { allowedHosts: ['factory.example.com'] } });
  assert.is((await call(base, 'snapshot', [], { ...bearer(token), Host: 'factory.example.com' })).status, 200, 'allowed host');
  for (const Host of ['evilfactory.example.com', 'factory.example.com.evil.com', 'sub.factory.example.com']) {
    assert.is((await call(base, 'snapshot', [], { ...bearer(token), Host })).status, 403, `${Host} is not factory.example.com`);
  }
  await factory.remote.resetToken();
  assert.is((await call(base, 'snapshot', [], { Cookie: cookie, ...origin })).status, 401, 'cookie after reset');
  assert.is((await call(base, 'snapshot', [], bearer(token))).status, 401, 'old token after reset');
});

remote('the token and sessions persist in remote.json, readable by the owner only', async (context) => {
  const cookie = await pair(context.base, context.token);
  const file = join(context.factory.dir, 'remote.json');
  assert.is(statSync(file).mode & 0o777, 0o600);
  const port = Number(new URL(context.base).port);
  await context.factory.stop();
  context.factory = await startTestFactory({ dir: context.factory.dir, overrides: { remoteAccess: { enabled: true, port } } });
  assert.is((await call(context.base, 'snapshot', [], { Cookie: cookie, Origin: context.base })).status, 200);
  assert.is((await call(context.base, 'snapshot', [], bearer(context.token))).status, 200);
});

remote('static files are served before sign-in with a Content-Security-Policy; the API is not', async ({ base }) => {
  const page = await send(`${base}/`);
  assert.is(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
  assert.is((await send(`${base}/../package.json`)).status, 404);
  assert.is((await send(`${base}/%2e%2e/package.json`)).status, 404);
  assert.is((await send(`${base}/api/events`)).status, 401);
});

remote('a run started and approved over HTTP, its events seen on the stream', async ({ factory, base, token }) => {
  const pipeline = await factory.pipeline([approval('gate', 'Ship "{{issue.title}}"?', { mode: 'single', options: ['Yes', 'Later'] }), shell('after', 'echo "chose {{steps.gate.selected}}"')]);
  const stream = await connectEventStream(`${base}/api/events`, { headers: bearer(token) });
  try {
    assert.is(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    const started = (await call(base, 'startRun', [{ pipelineId: pipeline.id, issue: { title: 'Line one\nline two' } }], bearer(token))).json().result;
    await stream.waitFor((current) => current.events.some((event) => event.event === 'run' && JSON.parse(event.data).status === 'waiting'), 5000);
    const approved = await call(base, 'approveStep', [started.id, 'gate', true, 'go', ['1']], bearer(token));
    assert.equal([approved.status, approved.json()], [200, { result: null }]);
    await stream.waitFor((current) => current.events.some((event) => event.event === 'run' && JSON.parse(event.data).status === 'succeeded'), 5000);
    await stream.waitFor((current) => current.events.some((event) => event.event === 'logs' && event.data.includes('chose Yes')), 5000);
    await stream.waitFor((current) => current.events.some((event) => event.event === 'inbox'), 5000);
    const runEvent = stream.events.find((event) => event.event === 'run')!;
    assert.is(JSON.parse(runEvent.data).issue.title, 'Line one\nline two', 'a payload with a newline survives the framing');
    assert.ok(stream.events.every((event) => /^\d+$/.test(event.id ?? '')), 'every event has an id');
    assert.not.ok(stream.events.some((event) => event.event === 'navigate'));

    // Resume: a reconnect with Last-Event-ID gets exactly what came after it.
    const middle = stream.events[Math.floor(stream.events.length / 2)]!;
    const resumed = await connectEventStream(`${base}/api/events`, { headers: bearer(token), lastEventId: middle.id });
    const expected = stream.events.filter((event) => Number(event.id) > Number(middle.id)).map((event) => event.id);
    await resumed.waitFor((current) => current.events.length >= expected.length, 3000);
    assert.equal(resumed.events.slice(0, expected.length).map((event) => event.id), expected);
    resumed.close();
  } finally {
    stream.close();
  }
});

remote('resetting the token closes every open event stream', async ({ factory, base, token }) => {
  const cookie = await pair(base, token);
  const stream = await connectEventStream(`${base}/api/events`, { headers: { Cookie: cookie } });
  assert.is(stream.status, 200);
  await factory.remote.resetToken();
  await waitFor(() => stream.ended, 3000, 'the stream to end');
  const again = await connectEventStream(`${base}/api/events`, { headers: { Cookie: cookie } });
  assert.is(again.status, 401);
  again.close();
});

remote('saveSettings moves the server to a new port; a taken port is reported and the app keeps running', async ({ factory, base, token }) => {
  const newPort = await freePort();
  await factory.api.saveSettings({ remoteAccess: { port: newPort } });
  const moved = `http://127.0.0.1:${newPort}`;
  assert.is((await call(moved, 'snapshot', [], bearer(token))).status, 200);
  await assert.not.ok(await send(`${base}/`).then(() => true, () => false), 'the old port is closed');
  const blocker = createServer();
  const takenPort = await freePort();
  await new Promise<void>((resolve) => blocker.listen(takenPort, '127.0.0.1', resolve));
  try {
    await factory.api.saveSettings({ remoteAccess: { port: takenPort } });
    const { remote: status } = await factory.api.snapshot();
    assert.is(status.running, false);
    assert.match(status.error!, new RegExp(`Port ${takenPort} .*already in use`));
    await factory.api.saveSettings({ remoteAccess: { enabled: false } });
    assert.equal((await factory.api.snapshot()).remote, { enabled: false, running: false });
  } finally {
    blocker.close();
  }
});

remote('a fuzz of hostile bodies never gives a 5xx or stops the server', async ({ base, token }) => {
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  const values = [null, 0, -1, 1e308, 'x', '', 'run_', 'pl_../../x', true, [], {}, [[[]]], { __proto__: { polluted: 1 } }, { title: 5 }, '\u0000', 'a'.repeat(5000)];
  const methods = ['snapshot', 'listRuns', 'getRun', 'startRun', 'cancelRun', 'retryRun', 'deleteRun', 'approveStep', 'readStepLog', 'readRunLog',
    'saveProject', 'deleteProject', 'savePipeline', 'createPipelineFromTemplate', 'duplicatePipeline', 'deletePipeline', 'exportPipeline',
    'importPipeline', 'saveSettings', 'markInboxRead', 'clearInbox'];
  const statuses = new Map<number, number>();
  for (let index = 0; index < 2000; index++) {
    let body: string;
    const shape = random();
    if (shape < 0.15) body = pick(['', '{', '[', 'null', '"x"', '{}', '[1,2', '\u0000', '[]]']);
    else if (shape < 0.3) body = JSON.stringify(pick(values));
    else body = JSON.stringify(Array.from({ length: Math.floor(random() * 6) }, () => pick(values)));
    const method = pick(methods);
    if (method === 'clearInbox' || method === 'saveSettings') continue; // keep the state this test relies on
    const answer = await call(base, method, body, bearer(token));
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    assert.ok(answer.status < 500, `${method} ${body.slice(0, 80)} → ${answer.status} ${answer.text.slice(0, 200)}`);
    assert.ok(typeof answer.json() === 'object');
  }
  assert.ok((statuses.get(400) ?? 0) > 100, 'most hostile calls are refused');
  assert.is((await call(base, 'snapshot', [], bearer(token))).status, 200);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

remote.run();

const pairing = suite('remote pairing');

pairing('the pairing offers the link, the token and a QR code of the link', async () => {
  const port = await freePort();
  const factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port } } });
  try {
    const result = factory.remote.pairing();
    assert.is(result.url, `http://127.0.0.1:${port}/pair?t=${result.token}`);
    assert.match(result.qrSvg, /^<svg [^>]*viewBox="0 0 \d+ \d+"[^>]*>/);
    assert.not.match(result.qrSvg, /<script|on\w+=/i);
    await factory.api.saveSettings({ remoteAccess: { enabled: false } });
    assert.throws(() => factory.remote.pairing(), /Remote access is not running/);
  } finally {
    await factory.close();
  }
});

pairing.run();

const invites = suite('one-time sign-in links');

invites('an invite signs in once, not twice, and not after ten minutes; a reset ends it', async () => {
  let now = 1_000_000;
  let saved: RemoteState | undefined;
  const auth = await RemoteAuth.open({ load: async () => saved, save: async (state) => void (saved = state) }, () => now);
  const once = auth.createInvite();
  assert.match(once, /^[A-Za-z0-9_-]{43}$/);
  assert.is.not(once, auth.token, 'not the access token');
  assert.ok(await auth.signIn(once), 'the first use signs in');
  assert.is(await auth.signIn(once), undefined, 'the second use does not');
  assert.not.ok(JSON.stringify(saved).includes(once), 'remote.json never holds an invite');
  const late = auth.createInvite();
  now += inviteLifetimeMs;
  assert.is(await auth.signIn(late), undefined, 'ten minutes later it has expired');
  const almost = auth.createInvite();
  now += inviteLifetimeMs - 1;
  assert.ok(await auth.signIn(almost), 'a millisecond before, it works');
  const reset = auth.createInvite();
  await auth.reset();
  assert.is(await auth.signIn(reset), undefined, 'a token reset ends invites too');
  assert.ok(await auth.signIn(auth.token), 'the access token still signs in');
});

invites('POST /api/pairing-invite: signed in and same-origin only; its link signs a browser in once', async () => {
  const port = await freePort();
  const factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port } } });
  try {
    const base = `http://127.0.0.1:${port}`;
    const token = new URL(factory.remote.pairingLink()!).searchParams.get('t')!;
    const invite = (headers: Record<string, string> = {}) => send(`${base}/api/pairing-invite`, { method: 'POST', headers });
    assert.is((await invite()).status, 401, 'not signed in');
    const cookie = await pair(base, token);
    assert.is((await invite({ Cookie: cookie })).status, 401, 'a cookie without Origin');
    assert.is((await invite({ Cookie: cookie, Origin: 'http://127.0.0.1:9' })).status, 401, 'a cookie from a foreign origin');
    assert.is((await invite({ Cookie: cookie, Origin: base, 'Sec-Fetch-Site': 'cross-site' })).status, 401, 'a cross-site request');
    assert.is((await invite({ Cookie: cookie, Origin: base, Host: 'evil.example.com' })).status, 403, 'a foreign Host');
    assert.is((await send(`${base}/api/pairing-invite`, { headers: { Cookie: cookie } })).status, 404, 'GET is not a route');
    const answer = await invite({ Cookie: cookie, Origin: base });
    assert.is(answer.status, 200);
    const { url, qrSvg } = answer.json() as { url: string; qrSvg: string };
    assert.match(url, new RegExp(`^${base}/pair\\?t=[A-Za-z0-9_-]{43}$`), 'this server, as the browser reaches it');
    assert.not.ok(url.includes(token), 'the access token is not in the link');
    assert.match(qrSvg, /^<svg /);
    const first = await send(url);
    assert.is(first.status, 303, 'the link signs in');
    const session = String(first.headers['set-cookie']).split(';')[0]!;
    assert.is((await call(base, 'snapshot', [], { Cookie: session, Origin: base })).status, 200, 'with a session of its own');
    assert.is((await send(url)).status, 401, 'but only once');
    assert.is((await invite(bearer(token))).status, 200, 'the access token may ask too');
  } finally {
    await factory.close();
  }
});

invites.run();
