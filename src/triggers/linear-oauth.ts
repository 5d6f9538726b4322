// Linear as an agent (PROVIDERS §8 "Install", issue 27.1): an account that is an OAuth app's
// installation in a workspace (actor=app), not a person's API key. The person enters the app's
// client id and secret; `connect` gives the authorize page to send them to, with a fresh `state`;
// Linear sends them back to Factory's callback (http/oauth-callback.ts) with a code, which
// `complete` exchanges at <api>/oauth/token for an access token and a refresh token, checks that
// `viewer` is the app, and saves as the account. The access token is refreshed at 80% of its
// lifetime, when it has expired, and once when Linear refuses it; a refresh token Linear no longer
// takes (`invalid_grant`) leaves the account with a `problem` until the person reconnects, and its
// triggers fail their polls with it (one notice per trigger) without asking Linear.
//
// Secrets: the client secret, the access token and the refresh token are kept in config.json only
// (ConnectionService shows `hasToken` and `hasClientSecret`); every request that carries one
// names it to httpRequest, which scrubs it from answers and errors.

import type { Connection, ConnectionOAuth, TriggerConfig } from '../core/api';
import { ConflictError, FactoryError, NotFoundError, ValidationError, errorMessage, quote } from '../core/errors';
import { newId, randomSecret } from '../core/ids';
import { setTimer } from '../core/timers';
import { validateConnection } from '../core/trigger-config';
import { isRecord } from '../core/validate';
import type { ConfigService } from '../engine/config';
import { httpRequest } from '../net/http';
import { ProviderError, jsonValue, text, type ObservedIssue, type TrackerProvider } from './provider';
import { LinearAuthenticationError, defaultLinearApi, graphql } from './providers/linear';
import { constantTimeEqual } from './secrets';

/** Linear's authorize page (tests point it at the fake Linear). */
const defaultLinearAuthorizeUrl = 'https://linear.app/oauth/authorize';
/** What the app asks for: act as itself, be assignable (delegation) and mentionable. */
const linearAgentScopes = ['read', 'write', 'app:assignable', 'app:mentionable'] as const;
/** A `state` works once, for this long: the person has ten minutes to approve the app. */
export const oauthStateLifetimeMs = 10 * 60_000;
/** Installations under way at once; a further one drops the oldest. */
const maxPendingStates = 20;
/** The share of the token's lifetime after which it is refreshed. */
const refreshShare = 0.8;
/** A refresh that failed for a passing reason (network, 5xx) is tried again after this long. */
const refreshRetryMs = 60_000;

/** What the callback page says: the account connected, or why not, in words. */
export interface CallbackResult {
  ok: boolean;
  message: string;
}

/** Answers one request to a callback: its query (`code`, `state`, or `error`). */
export type CallbackHandler = (query: URLSearchParams) => Promise<CallbackResult>;

/** Where Linear sends the person back: a URL on the remote-access server, or a one-time loopback listener (closed by `close`). */
type CallbackOpener = (complete: CallbackHandler) => Promise<{ redirectUri: string; close?: () => void }>;

interface LinearOAuthOptions {
  config: ConfigService;
  /** Chooses and opens the callback for one installation. */
  openCallback: CallbackOpener;
  authorizeUrl?: string;
  now?: () => number;
  /** Runs `callback` after `delayMs`; returns its cancel (default: an unref'd setTimer). Tests take the callbacks. */
  schedule?: (callback: () => void, delayMs: number) => () => void;
  /** An account was (re)connected: its paused triggers may poll again. */
  reconnected?: (connection: Connection) => void;
}

interface PendingInstall {
  state: string;
  input: InstallInput;
  redirectUri: string;
  expiresAt: number;
  close?: () => void;
}

type InstallInput = Omit<Connection, 'id' | 'token' | 'account' | 'oauth'> & { id?: string; oauth: { clientId: string; clientSecret: string } };

/** A token endpoint's answer (RFC 6749 §5.1). */
interface TokenAnswer {
  accessToken: string;
  refreshToken?: string;
  expiresInSec?: number;
}

/** Linear refused a grant (`invalid_grant`, a wrong client): the account must be reconnected. */
class OAuthGrantError extends FactoryError {
  override name = 'OAuthGrantError';
}

export class LinearOAuth {
  private readonly pending: PendingInstall[] = [];
  /** The refresh under way, by account id: concurrent callers share it. */
  private readonly refreshing = new Map<string, Promise<Connection>>();
  private readonly timers = new Map<string, () => void>();
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly options: LinearOAuthOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Plans the refresh of every installed account; call once at start. */
  start(): void {
    for (const connection of this.options.config.current.connections) if (connection.oauth) this.planRefresh(connection);
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    for (const install of this.pending.splice(0)) install.close?.();
  }

  // ─── Install ───

  /**
   * Starts an installation: checks the input (a Linear account with the app's client id, and its
   * secret or a stored one), opens the callback, and returns Linear's authorize page with a fresh
   * `state` that works once, for ten minutes.
   */
  async connect(input: unknown): Promise<{ authorizeUrl: string }> {
    const clean = this.installInput(input);
    const state = randomSecret(32);
    const { redirectUri, close } = await this.options.openCallback((query) => this.complete(query));
    this.dropExpired();
    if (this.pending.length >= maxPendingStates) this.pending.shift()!.close?.();
    this.pending.push({ state, input: clean, redirectUri, expiresAt: this.now() + oauthStateLifetimeMs, ...(close ? { close } : {}) });
    const url = new URL(this.options.authorizeUrl ?? defaultLinearAuthorizeUrl);
    url.searchParams.set('client_id', clean.oauth.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', linearAgentScopes.join(','));
    url.searchParams.set('actor', 'app');
    url.searchParams.set('state', state);
    return { authorizeUrl: url.href };
  }

  /**
   * Linear sent the person back: the `state` must be one given out in the last ten minutes and
   * not used yet (compared in constant time with each); then the code is exchanged, the token's
   * viewer checked to be the app, and the account saved. Never throws: the page says what happened.
   */
  async complete(query: URLSearchParams): Promise<CallbackResult> {
    const install = this.takeState(query.get('state') ?? '');
    if (!install) return { ok: false, message: 'This link is not one Factory is waiting for: it is older than ten minutes, was used already, or did not come from Factory. Start again from Settings → Accounts.' };
    const refused = query.get('error');
    if (refused) return { ok: false, message: `Linear did not install the app: ${(query.get('error_description') ?? refused).slice(0, 300)}. Start again from Settings → Accounts.` };
    const code = query.get('code');
    if (!code) return { ok: false, message: 'Linear sent no authorization code. Start again from Settings → Accounts.' };
    try {
      const answer = await this.tokenRequest(install.input, { grant_type: 'authorization_code', code, redirect_uri: install.redirectUri }, [code]);
      const connection = await this.save(install.input, answer);
      this.options.reconnected?.(connection);
      return { ok: true, message: `The Linear account ${connection.name} is connected as the app ${connection.account?.name ?? ''}.` };
    } catch (error) {
      return { ok: false, message: `The Linear account was not connected: ${errorMessage(error)}` };
    }
  }

  private installInput(input: unknown): InstallInput {
    const clean = validateConnection(input, ['linear']);
    const issues: { field: string; message: string }[] = [];
    const oauth = isRecord(input) && isRecord(input.oauth) ? input.oauth : {};
    const stored = clean.id ? this.options.config.current.connections.find((connection) => connection.id === clean.id) : undefined;
    if (clean.id && !stored) throw new NotFoundError(`No account with id ${quote(clean.id)}`);
    if (stored && stored.kind !== 'linear') throw new ConflictError('An account cannot change its kind: add a new account instead');
    const clientId = typeof oauth.clientId === 'string' ? oauth.clientId.trim() : '';
    const clientSecret = typeof oauth.clientSecret === 'string' && oauth.clientSecret.trim() ? oauth.clientSecret.trim() : stored?.oauth?.clientSecret;
    if (!/^[\x21-\x7e]{1,200}$/.test(clientId)) issues.push({ field: 'oauth.clientId', message: 'Enter the client ID Linear shows for the OAuth application (Settings → API → OAuth applications)' });
    if (!clientSecret || !/^[\x21-\x7e]{1,500}$/.test(clientSecret)) issues.push({ field: 'oauth.clientSecret', message: 'Enter the client secret Linear shows for the OAuth application: one line, no spaces' });
    if (issues.length > 0) throw new ValidationError(issues, 'Account not connected:');
    const { token: _ignored, ...rest } = clean;
    return { ...rest, oauth: { clientId, clientSecret: clientSecret! } };
  }

  /** The pending installation whose state `presented` is, removed (single use); undefined for any other. */
  private takeState(presented: string): PendingInstall | undefined {
    this.dropExpired();
    if (!presented) return undefined;
    // Every pending state is compared, in constant time, so timing tells nothing of which came close.
    let found: PendingInstall | undefined;
    for (const install of this.pending) if (constantTimeEqual(presented, install.state)) found = install;
    if (found) this.pending.splice(this.pending.indexOf(found), 1);
    return found;
  }

  private dropExpired(): void {
    const now = this.now();
    for (let index = this.pending.length - 1; index >= 0; index--) {
      if (this.pending[index]!.expiresAt <= now) this.pending.splice(index, 1)[0]!.close?.();
    }
  }

  /** Checks the token's viewer is an app user, then saves the account (a new one, or the one reconnected). */
  private async save(input: InstallInput, answer: TokenAnswer): Promise<Connection> {
    const probe: Connection = { ...input, id: input.id ?? '', token: answer.accessToken };
    const data = await graphql(probe, 'query FactoryAppViewer { viewer { id name app } }');
    const viewer = isRecord(data.viewer) ? data.viewer : {};
    if (!text(viewer.id)) throw new ProviderError('Linear answered without the account (viewer) of the new token');
    if (viewer.app !== true) throw new ProviderError(`the token acts as the person ${quote(text(viewer.name) ?? viewer.id)}, not as the app: the authorize page must be opened with actor=app, as Factory does; start again from Settings → Accounts`);
    const account = { id: text(viewer.id)!, name: text(viewer.name) ?? text(viewer.id)! };
    const oauth = this.oauthOf(input.oauth, answer);
    const saved = await this.options.config.update((config) => {
      const index = input.id ? config.connections.findIndex((connection) => connection.id === input.id) : -1;
      if (input.id && index < 0) throw new NotFoundError(`No account with id ${quote(input.id)}`);
      const connection: Connection = { ...input, id: input.id ?? newId('con'), name: input.name || `Linear agent (${account.name})`, token: answer.accessToken, account, oauth };
      const connections = index < 0 ? [...config.connections, connection] : config.connections.with(index, connection);
      return { config: { ...config, connections }, result: connection };
    });
    this.planRefresh(saved);
    return saved;
  }

  private oauthOf(app: { clientId: string; clientSecret: string }, answer: TokenAnswer, previous?: ConnectionOAuth): ConnectionOAuth {
    const now = this.now();
    const refreshToken = answer.refreshToken ?? previous?.refreshToken;
    return {
      clientId: app.clientId, clientSecret: app.clientSecret,
      ...(refreshToken ? { refreshToken } : {}),
      ...(answer.expiresInSec !== undefined ? { expiresAt: now + answer.expiresInSec * 1000, refreshAt: now + Math.round(answer.expiresInSec * 1000 * refreshShare) } : {}),
    };
  }

  // ─── Refresh ───

  /**
   * A fresh access token for the account: refreshed with its refresh token (one refresh at a time
   * per account). A refresh token Linear refuses leaves the account with a `problem` and throws
   * OAuthGrantError; a passing failure (network, 5xx) throws without a problem, and is retried.
   */
  refresh(connectionId: string): Promise<Connection> {
    const running = this.refreshing.get(connectionId);
    if (running) return running;
    const refresh = this.refreshOnce(connectionId).finally(() => this.refreshing.delete(connectionId));
    this.refreshing.set(connectionId, refresh);
    return refresh;
  }

  private async refreshOnce(connectionId: string): Promise<Connection> {
    const connection = this.connection(connectionId);
    const { oauth } = connection;
    if (!oauth) throw new ConflictError(`The account ${quote(connection.name)} is not an app installation`);
    if (oauth.problem) throw new OAuthGrantError(oauth.problem);
    if (!oauth.refreshToken) return this.markProblem(connection, 'Linear gave no refresh token, and the access token has expired');
    let answer: TokenAnswer;
    try {
      answer = await this.tokenRequest({ ...connection, oauth }, { grant_type: 'refresh_token', refresh_token: oauth.refreshToken }, [oauth.refreshToken]);
    } catch (error) {
      if (error instanceof OAuthGrantError) return this.markProblem(connection, error.message);
      this.planRetry(connection);
      throw error;
    }
    const updated = await this.options.config.update((config) => {
      const index = config.connections.findIndex((candidate) => candidate.id === connectionId);
      if (index < 0) throw new NotFoundError(`No account with id ${quote(connectionId)}`);
      const current = config.connections[index]!;
      const next: Connection = { ...current, token: answer.accessToken, oauth: this.oauthOf(oauth, answer, current.oauth) };
      return { config: { ...config, connections: config.connections.with(index, next) }, result: next };
    });
    this.planRefresh(updated);
    return updated;
  }

  /** Records why the account needs reconnecting (shown on it, and by its triggers' polls), then throws it. */
  private async markProblem(connection: Connection, reason: string): Promise<never> {
    const problem = `The Linear account ${quote(connection.name)} must be reconnected (Settings → Accounts → Connect): ${reason}. Its triggers are paused until then.`;
    await this.options.config.update((config) => {
      const index = config.connections.findIndex((candidate) => candidate.id === connection.id);
      const current = config.connections[index];
      if (!current?.oauth || current.oauth.problem) return { config, result: undefined };
      return { config: { ...config, connections: config.connections.with(index, { ...current, oauth: { ...current.oauth, problem } }) }, result: undefined };
    });
    this.timers.get(connection.id)?.();
    this.timers.delete(connection.id);
    throw new OAuthGrantError(problem);
  }

  private connection(id: string): Connection {
    const connection = this.options.config.current.connections.find((candidate) => candidate.id === id);
    if (!connection) throw new NotFoundError(`No account with id ${quote(id)}`);
    return connection;
  }

  /** Sets the timer of the account's next refresh: at `refreshAt` (80% of the token's lifetime). */
  private planRefresh(connection: Connection): void {
    this.timers.get(connection.id)?.();
    this.timers.delete(connection.id);
    const at = connection.oauth?.refreshAt;
    if (this.stopped || at === undefined || connection.oauth?.problem || !connection.oauth?.refreshToken) return;
    this.timers.set(connection.id, this.schedule(() => this.scheduledRefresh(connection.id), at - this.now()));
  }

  private planRetry(connection: Connection): void {
    if (this.stopped) return;
    this.timers.get(connection.id)?.();
    this.timers.set(connection.id, this.schedule(() => this.scheduledRefresh(connection.id), refreshRetryMs));
  }

  private scheduledRefresh(connectionId: string): void {
    this.timers.delete(connectionId);
    if (this.stopped || !this.options.config.current.connections.some((connection) => connection.id === connectionId)) return;
    // A failure is kept on the account (a problem) or retried (planRetry): nothing to report here.
    this.refresh(connectionId).catch(() => undefined);
  }

  private schedule(callback: () => void, delayMs: number): () => void {
    if (this.options.schedule) return this.options.schedule(callback, delayMs);
    const timer = setTimer(callback, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  }

  /**
   * One request to Linear's token endpoint (form-encoded, RFC 6749 §4.1.3 and §6), with the app's
   * credentials in the body. `invalid_grant`, `invalid_client` and other 4xx refusals throw
   * OAuthGrantError in Linear's words; anything else ProviderError (retryable for 5xx).
   */
  private async tokenRequest(app: Pick<Connection, 'baseUrl'> & { oauth: { clientId: string; clientSecret: string } }, grant: Record<string, string>, secrets: string[]): Promise<TokenAnswer> {
    const base = (app.baseUrl ?? defaultLinearApi).replace(/\/+$/, '').replace(/\/graphql$/, '');
    const body = new URLSearchParams({ ...grant, client_id: app.oauth.clientId, client_secret: app.oauth.clientSecret });
    const answer = await httpRequest({
      url: `${base}/oauth/token`, method: 'POST', service: 'Linear',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: body.toString(), secrets: [app.oauth.clientSecret, ...secrets],
    });
    const json = jsonValue(answer.text);
    const said = isRecord(json) ? text(json.error_description) ?? text(json.error) : undefined;
    if (answer.status >= 400 && answer.status < 500) throw new OAuthGrantError(`Linear refused the ${grant.grant_type === 'refresh_token' ? 'refresh token' : 'authorization code'}${said ? ` (${said.slice(0, 200)})` : ` (HTTP ${answer.status})`}`);
    if (answer.status !== 200 || !isRecord(json) || !text(json.access_token)) throw new ProviderError(`Linear's token endpoint answered HTTP ${answer.status} without a token: try again later`, answer.status >= 500);
    const expiresIn = Number(json.expires_in);
    return {
      accessToken: text(json.access_token)!,
      ...(text(json.refresh_token) ? { refreshToken: text(json.refresh_token)! } : {}),
      ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expiresInSec: expiresIn } : {}),
    };
  }

  // ─── Using the token ───

  /**
   * Runs `call` with the account as it is now, its token fresh: an account with a problem fails at
   * once with it (its triggers pause); an expired token is refreshed first; a token Linear refuses
   * is refreshed once and the call tried again. Accounts with an API key run `call` as they are.
   */
  async withFreshToken<T>(connection: Connection, call: (fresh: Connection) => Promise<T>): Promise<T> {
    if (!connection.oauth || !connection.id) return call(connection);
    let current = this.options.config.current.connections.find((candidate) => candidate.id === connection.id) ?? connection;
    if (current.oauth?.problem) throw new ProviderError(current.oauth.problem);
    if (current.oauth?.expiresAt !== undefined && current.oauth.expiresAt <= this.now()) current = await this.refresh(current.id);
    try {
      return await call(current);
    } catch (error) {
      if (!(error instanceof LinearAuthenticationError)) throw error;
      return call(await this.refresh(current.id));
    }
  }

  /** The Linear provider with every call made through `withFreshToken`. */
  provider(linear: TrackerProvider): TrackerProvider {
    const fresh = <T>(connection: Connection, call: (current: Connection) => Promise<T>) => this.withFreshToken(connection, call);
    const oauth = this;
    return {
      ...linear,
      verifyConnection: (connection) => fresh(connection, (current) => linear.verifyConnection(current)),
      checkTrigger: (trigger, connection) => fresh(connection, (current) => linear.checkTrigger(trigger, current)),
      fetchIssue: (trigger, connection, key) => fresh(connection, (current) => linear.fetchIssue(trigger, current, key)),
      upsertComment: (target, comment, commentId) => fresh(target.connection, (current) => linear.upsertComment({ ...target, connection: current }, comment, commentId)),
      mark: (target, name, previous) => fresh(target.connection, (current) => linear.mark({ ...target, connection: current }, name, previous)),
      poll: (trigger: TriggerConfig, connection: Connection, cursor?: string, signal?: AbortSignal) => oauth.pollFresh(linear, trigger, connection, cursor, signal),
    };
  }

  /** A poll through `withFreshToken`: a refused token before the first page refreshes it and starts the poll again. */
  private async *pollFresh(linear: TrackerProvider, trigger: TriggerConfig, connection: Connection, cursor?: string, signal?: AbortSignal): AsyncGenerator<ObservedIssue[], string | undefined> {
    const first = await this.withFreshToken(connection, async (current) => {
      const pages = linear.poll(trigger, current, cursor, signal);
      return { pages, page: await pages.next() };
    });
    let { page } = first;
    while (!page.done) {
      yield page.value;
      page = await first.pages.next();
    }
    return page.value;
  }
}
