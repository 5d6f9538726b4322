// Linear as an agent, installed (issue 27.1 and the token half of 27.6): a real Factory against the
// fake Linear's OAuth endpoints (authorize, token) and GraphQL, through the remote-access callback
// and the desktop's one-time loopback listener, with an injected clock and refresh timer.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { configSecrets, startFactory, type Factory } from '../../src/app';
import { factoryEventNames, type ConnectionInput, type ConnectionView, type TriggerConfig } from '../../src/core/api';
import type { DesktopFunctions } from '../../src/api';
import { FakeLinear } from '../fakes/linear';
import { rejects } from '../helpers/assert';
import { shell } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

interface Context {
  fake: FakeLinear;
  factory: Factory;
  dir: string;
  /** The engine's clock for OAuth (states' ten minutes, token expiry). */
  clock: { now: number };
  /** Refreshes the engine planned, latest last. */
  timers: { callback: () => void; delayMs: number; cancelled: boolean }[];
  events: unknown[];
  logged: string[];
  restoreConsole: () => void;
}

const oauth = suite<Context>('linear-oauth');

async function start(context: Context, mode: 'remote' | 'desktop'): Promise<void> {
  const port = await freePort();
  context.clock = { now: Date.now() };
  context.timers = [];
  context.factory = await startFactory({
    dataDir: context.dir, platform: mode === 'remote' ? 'web' : 'linux', uiRoot: 'dist/ui',
    overrides: { remoteAccess: { enabled: mode === 'remote', host: '127.0.0.1', port } },
    ...(mode === 'desktop' ? { desktop: {} as DesktopFunctions } : {}),
    triggerTuning: { firstPollDelayMs: 3600_000 },
    linearOAuth: {
      authorizeUrl: `${context.fake.url}/oauth/authorize`,
      now: () => context.clock.now,
      schedule: (callback, delayMs) => {
        const timer = { callback, delayMs, cancelled: false };
        context.timers.push(timer);
        return () => void (timer.cancelled = true);
      },
    },
  });
  for (const name of factoryEventNames) context.factory.api.on(name, (payload) => context.events.push(payload));
}

oauth.before.each(async (context) => {
  context.fake = await FakeLinear.start();
  context.fake.tokenLifetimeSec = 3600;
  context.dir = makeTempDir('factory-linear-oauth');
  context.events = [];
  context.logged = [];
  const methods = ['log', 'info', 'warn', 'error'] as const;
  const originals = methods.map((method) => console[method]);
  for (const method of methods) console[method] = (...args: unknown[]) => void context.logged.push(args.map(String).join(' '));
  context.restoreConsole = () => methods.forEach((method, index) => (console[method] = originals[index]!));
});
oauth.after.each(async (context) => {
  context.restoreConsole();
  await context.factory?.stop();
  await context.fake.stop();
  removeTempDir(context.dir);
});

function input(context: Context, extra: Partial<ConnectionInput> = {}): ConnectionInput {
  return { kind: 'linear', name: 'Acme agent', baseUrl: context.fake.url, oauth: { ...context.fake.oauthApp }, ...extra };
}

/** Opens the authorize page as a browser would and follows Linear's redirect to Factory's callback: the page's status and words. */
async function approveIn(authorizeUrl: string): Promise<{ status: number; page: string; callbackUrl: string }> {
  const authorize = await fetch(authorizeUrl, { redirect: 'manual' });
  assert.is(authorize.status, 302, 'Linear redirects back to the callback');
  const callbackUrl = authorize.headers.get('location')!;
  const callback = await fetch(callbackUrl);
  return { status: callback.status, page: await callback.text(), callbackUrl };
}

async function install(context: Context): Promise<ConnectionView> {
  const { authorizeUrl } = await context.factory.api.connectLinearAgent(input(context));
  const { status, page } = await approveIn(authorizeUrl);
  assert.is(status, 200, page);
  return (await context.factory.api.snapshot()).accounts.at(-1)!;
}

async function agentTrigger(context: Context, account: ConnectionView): Promise<TriggerConfig> {
  const pipeline = await context.factory.api.savePipeline({ projectId: (await context.factory.api.snapshot()).projects[0]!.id, name: 'Agent', variables: {}, steps: [shell('say', 'echo {{issue.key}}')] });
  return context.factory.api.saveTrigger({ name: 'Agent issues', kind: 'linear', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { team: 'ENG' } });
}

const lastAuthorization = (fake: FakeLinear) => String(fake.calls.at(-1)!.headers.authorization);
const refreshes = (fake: FakeLinear) => fake.tokenRequests.filter((form) => form.get('grant_type') === 'refresh_token').length;

// ─── Install ───

oauth('installs as the app through the remote-access callback, and says so on the page', async (context) => {
  await start(context, 'remote');
  const remoteUrl = context.factory.remote.status().url!;
  const { authorizeUrl } = await context.factory.api.connectLinearAgent(input(context));
  const url = new URL(authorizeUrl);
  assert.is(`${url.origin}${url.pathname}`, `${context.fake.url}/oauth/authorize`);
  assert.is(url.searchParams.get('client_id'), context.fake.oauthApp.clientId);
  assert.is(url.searchParams.get('redirect_uri'), `${remoteUrl}/oauth/linear/callback`);
  assert.is(url.searchParams.get('response_type'), 'code');
  assert.is(url.searchParams.get('scope'), 'read,write,app:assignable,app:mentionable');
  assert.is(url.searchParams.get('actor'), 'app');
  assert.match(url.searchParams.get('state')!, /^[\w-]{40,}$/);
  const { status, page } = await approveIn(authorizeUrl);
  assert.is(status, 200);
  assert.match(page, /Linear is connected/);
  assert.match(page, /You can close this page/);
  const [exchange] = context.fake.tokenRequests;
  assert.equal(Object.fromEntries(exchange!), { grant_type: 'authorization_code', code: exchange!.get('code'), redirect_uri: `${remoteUrl}/oauth/linear/callback`, client_id: context.fake.oauthApp.clientId, client_secret: context.fake.oauthApp.clientSecret });
  const [account] = (await context.factory.api.snapshot()).accounts;
  assert.equal(account!.account, { id: context.fake.appUser.id, name: 'Factory Agent' });
  assert.equal(account!.oauth, { clientId: context.fake.oauthApp.clientId, hasClientSecret: true, expiresAt: context.clock.now + 3600_000 });
  assert.is(account!.hasToken, true);
  assert.is(account!.problem, undefined);
  assert.match(context.fake.callsOf('viewer').at(-1)!.query, /viewer \{ id name app \}/);
});

oauth('installs through a one-time loopback listener on the desktop, which closes after its one callback', async (context) => {
  await start(context, 'desktop');
  const { authorizeUrl } = await context.factory.api.connectLinearAgent(input(context));
  const redirectUri = new URL(new URL(authorizeUrl).searchParams.get('redirect_uri')!);
  assert.is(redirectUri.hostname, '127.0.0.1');
  assert.is(redirectUri.pathname, '/oauth/linear/callback');
  const { status, page, callbackUrl } = await approveIn(authorizeUrl);
  assert.is(status, 200);
  assert.match(page, /Linear is connected/);
  assert.is((await context.factory.api.snapshot()).accounts[0]!.account!.name, 'Factory Agent');
  await waitFor(() => fetch(callbackUrl).then(() => false, () => true), 5000, 'the loopback listener to close');
});

oauth('without remote access or the desktop there is no callback: refused in words', async (context) => {
  await start(context, 'remote');
  await context.factory.api.saveSettings({ remoteAccess: { enabled: false } });
  await rejects(context.factory.api.connectLinearAgent(input(context)), /switch on remote access/);
  await rejects(context.factory.api.connectLinearAgent(input(context, { oauth: { clientId: '', clientSecret: 'x' } })), /client ID/);
});

oauth('a wrong, expired or replayed state is refused, and no code is exchanged for it', async (context) => {
  await start(context, 'remote');
  const remoteUrl = context.factory.remote.status().url!;
  const first = await context.factory.api.connectLinearAgent(input(context));
  const wrong = await fetch(`${remoteUrl}/oauth/linear/callback?code=abc&state=not-the-state`);
  assert.is(wrong.status, 400);
  assert.match(await wrong.text(), /not one Factory is waiting for/);
  const missing = await fetch(`${remoteUrl}/oauth/linear/callback?code=abc`);
  assert.is(missing.status, 400);
  assert.is(context.fake.tokenRequests.length, 0);

  const { callbackUrl } = await approveIn(first.authorizeUrl);
  const replayed = await fetch(callbackUrl);
  assert.is(replayed.status, 400, 'a state works once');
  assert.is(context.fake.tokenRequests.length, 1);

  const late = await context.factory.api.connectLinearAgent(input(context));
  context.clock.now += 10 * 60_000 + 1;
  const expired = await approveIn(late.authorizeUrl);
  assert.is(expired.status, 400, 'a state works for ten minutes');
  assert.match(expired.page, /older than ten minutes/);
  assert.is(context.fake.tokenRequests.length, 1);
  assert.is((await context.factory.api.snapshot()).accounts.length, 1);
});

oauth('a token that acts as the person, not the app, is not saved', async (context) => {
  await start(context, 'remote');
  const { authorizeUrl } = await context.factory.api.connectLinearAgent(input(context));
  const asPerson = new URL(authorizeUrl);
  asPerson.searchParams.delete('actor');
  const { status, page } = await approveIn(asPerson.href);
  assert.is(status, 400);
  assert.match(page, /acts as the person .*Ada Lovelace.*not as the app/);
  assert.is((await context.factory.api.snapshot()).accounts.length, 0);
});

oauth('a person who declines on Linear is told so', async (context) => {
  await start(context, 'remote');
  context.fake.denyNextAuthorize = true;
  const { authorizeUrl } = await context.factory.api.connectLinearAgent(input(context));
  const { status, page } = await approveIn(authorizeUrl);
  assert.is(status, 400);
  assert.match(page, /Linear did not install the app: The user denied access/);
});

// ─── Refresh ───

oauth('refreshes at 80% of the token\'s lifetime, and before a call once it has expired', async (context) => {
  await start(context, 'remote');
  const account = await install(context);
  const planned = context.timers.at(-1)!;
  assert.is(planned.delayMs, 0.8 * 3600_000);
  const installed = lastAuthorization(context.fake);
  planned.callback();
  await waitFor(() => refreshes(context.fake) === 1, 5000, 'the planned refresh');
  const [refresh] = context.fake.tokenRequests.filter((form) => form.get('grant_type') === 'refresh_token');
  assert.equal([...refresh!.keys()].sort(), ['client_id', 'client_secret', 'grant_type', 'refresh_token']);
  await waitFor(() => context.timers.length === 2, 5000, 'the next refresh to be planned');
  const trigger = await agentTrigger(context, account);
  assert.is((await context.factory.api.pollTrigger(trigger.id)).lastError, undefined);
  const refreshed = lastAuthorization(context.fake);
  assert.is.not(refreshed, installed, 'the poll used the refreshed token');
  await context.factory.api.saveConnection({ id: account.id, kind: 'linear', name: 'Renamed agent', baseUrl: context.fake.url });
  await context.factory.api.pollTrigger(trigger.id);
  assert.is(lastAuthorization(context.fake), refreshed, 'renaming the account keeps its live token');

  context.clock.now += 3600_000 + 1; // the token has expired, its timer not fired (a sleeping laptop)
  const before = context.fake.calls.length;
  assert.is((await context.factory.api.pollTrigger(trigger.id)).lastError, undefined);
  assert.is(refreshes(context.fake), 2, 'refreshed before the call');
  assert.is(context.fake.calls.length, before + 1, 'the expired token was not sent');
  assert.is.not(lastAuthorization(context.fake), refreshed);

  context.clock.now += 2 * 3600_000; // expired again: saving the account refreshes while it verifies
  await context.factory.api.saveConnection({ id: account.id, kind: 'linear', name: 'Agent', baseUrl: context.fake.url });
  assert.is(refreshes(context.fake), 3);
  assert.is((await context.factory.api.pollTrigger(trigger.id)).lastError, undefined, 'the save kept the refreshed tokens, not the ones it started with');
  assert.is(refreshes(context.fake), 3);
});

oauth('a token Linear refuses is refreshed once and the call tried again', async (context) => {
  await start(context, 'remote');
  const account = await install(context);
  const trigger = await agentTrigger(context, account);
  context.fake.revokeAccessTokens();
  const state = await context.factory.api.pollTrigger(trigger.id);
  assert.is(state.lastError, undefined);
  assert.is(refreshes(context.fake), 1);
  assert.is(context.fake.calls.at(-1)!.fields[0], 'issues');
});

oauth('a refresh token Linear no longer takes pauses the triggers with one notice, until the account is reconnected', async (context) => {
  await start(context, 'remote');
  const account = await install(context);
  const trigger = await agentTrigger(context, account);
  context.fake.revokeAccessTokens();
  context.fake.revokeRefreshTokens();
  const failed = await context.factory.api.pollTrigger(trigger.id);
  assert.match(failed.lastError!, /Acme agent.* must be reconnected .*Linear refused the refresh token \(Token has been expired or revoked\.\)/);
  const shown = (await context.factory.api.snapshot()).accounts[0]!;
  assert.match(shown.problem!, /must be reconnected/);
  const calls = context.fake.calls.length;
  const tokenRequests = context.fake.tokenRequests.length;
  assert.match((await context.factory.api.pollTrigger(trigger.id)).lastError!, /must be reconnected/);
  assert.is(context.fake.calls.length, calls, 'a paused trigger does not ask Linear');
  assert.is(context.fake.tokenRequests.length, tokenRequests, 'nor refresh again');
  const notices = (await context.factory.api.snapshot()).inbox.filter((item) => item.kind === 'trigger.error');
  assert.is(notices.length, 1);
  assert.match(notices[0]!.body!, /must be reconnected/);

  const { authorizeUrl } = await context.factory.api.connectLinearAgent({ ...input(context), id: account.id, oauth: { clientId: context.fake.oauthApp.clientId } });
  assert.is((await approveIn(authorizeUrl)).status, 200, 'reconnecting keeps the stored client secret');
  const reconnected = (await context.factory.api.snapshot()).accounts;
  assert.is(reconnected.length, 1);
  assert.is(reconnected[0]!.problem, undefined);
  await waitFor(async () => (await context.factory.api.snapshot()).triggerStates[trigger.id]!.lastError === undefined, 5000, 'the trigger to poll again');
});

oauth('the client secret and the tokens never leave config.json: not in the snapshot, events, logs, errors or other files', async (context) => {
  await start(context, 'remote');
  const account = await install(context);
  const trigger = await agentTrigger(context, account);
  context.timers.at(-1)!.callback();
  await waitFor(() => refreshes(context.fake) === 1, 5000, 'the planned refresh');
  await context.factory.api.saveConnection({ id: account.id, kind: 'linear', name: 'Renamed agent', baseUrl: context.fake.url });
  context.fake.revokeAccessTokens();
  context.fake.revokeRefreshTokens();
  const { lastError } = await context.factory.api.pollTrigger(trigger.id);
  const secrets = [context.fake.oauthApp.clientSecret, ...context.fake.issuedTokens()];
  const config = readFileSync(join(context.dir, 'config.json'), 'utf8');
  assert.ok(config.includes(context.fake.oauthApp.clientSecret), 'kept as a secret in config.json');
  const stored = JSON.parse(config).connections[0].oauth;
  for (const secret of [context.fake.oauthApp.clientSecret, stored.refreshToken]) assert.ok(configSecrets(JSON.parse(config)).includes(secret), 'kept out of step environments');
  const live = (await context.factory.api.snapshot()).accounts[0]!;
  assert.is(live.name, 'Renamed agent');
  const seen = [
    ['snapshot', JSON.stringify(await context.factory.api.snapshot())],
    ['events', JSON.stringify(context.events)],
    ['logs', context.logged.join('\n')],
    ['errors', String(lastError)],
  ];
  await context.factory.stop();
  for (const file of filesUnder(context.dir)) if (!file.endsWith('config.json')) seen.push([file, readFileSync(file, 'utf8')]);
  for (const [where, text] of seen) for (const secret of secrets) assert.not.ok(text!.includes(secret), `a secret in ${where}`);
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

oauth.run();
