// A fake Linear on a real node:http server on 127.0.0.1, speaking Linear's GraphQL as the
// production client meets it (PROVIDERS §1): POST /graphql with `{query, variables}`, personal API
// keys bare in `Authorization` and OAuth tokens as `Bearer`, answers shaped by the query's own
// selection (a field the query did not ask for is not in the answer), IssueFilter evaluated
// (and/or, comparators, `some`, `isMe`, `null`), relay pagination with opaque cursors, Linear's
// error shapes (AUTHENTICATION_ERROR, RATELIMITED, GRAPHQL_VALIDATION_FAILED) and rate-limit
// headers. It keeps comments and states, counts requests, and sends signed webhooks.
//   Operations: viewer, organization, teams, workflowStates, issues, issue { comments }, commentCreate,
//   commentUpdate, issueUpdate, and the agent platform's agentActivityCreate and agentSessionUpdate
//   (inputs checked field by field against AgentActivityCreateInput / AgentSessionUpdateInput of
//   linear/linear packages/sdk/src/schema.graphql), with AgentSessionEvent webhooks in the shape of
//   AgentSessionEventWebhookPayload. OAuth: GET /oauth/authorize (approves at once and redirects
//   back with a code and the state) and POST /oauth/token (authorization_code and refresh_token
//   grants, rotating refresh tokens; a revoked one answers `invalid_grant`); a token installed with
//   actor=app has the app user as its viewer (`app: true`).

import { createHmac, randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

type Json = Record<string, any>;

/** A person of the workspace; `guest`: limited to some teams (User.guest), `active`: false when suspended. */
export interface FakeUser { id: string; name: string; email: string; displayName?: string; guest?: boolean; active?: boolean }
export interface FakeState { id: string; name: string; type: string; color: string }
export interface FakeTeam { id: string; key: string; name: string; states: FakeState[] }
export interface FakeLabel { id: string; name: string; color: string }
export interface FakeIssue {
  id: string; identifier: string; number: number; title: string; description: string | null;
  priority: number; createdAt: string; updatedAt: string; archivedAt: string | null;
  team: FakeTeam; state: FakeState; assignee: FakeUser | null; labels: FakeLabel[];
}
export interface FakeComment { id: string; issueId: string; body: string; createdAt: string; updatedAt: string; /** Its author: the viewer for comments made through the API. */ user: FakeUser }

/** An agent session Linear opened for the app (an issue delegated to it, or the app mentioned). */
export interface FakeAgentSession {
  id: string; issue: FakeIssue; organizationId: string; creator: FakeUser; comment?: FakeComment;
  externalUrls: { label: string; url: string }[]; activities: FakeAgentActivity[];
}
/** An activity as agentActivityCreate stored it (the agent's) or as a person wrote it (a prompt). */
export interface FakeAgentActivity {
  id: string; agentSessionId: string; content: Json; signal: string | null; signalMetadata: Json | null; ephemeral: boolean; createdAt: string; userId?: string;
}

/** AgentActivityCreateInput's fields (schema.graphql), required ones marked. */
const activityInputFields: Record<string, boolean> = { agentSessionId: true, content: true, contextualMetadata: false, ephemeral: false, id: false, signal: false, signalMetadata: false };
const activitySignals = ['auth', 'continue', 'select', 'stop'];
/** AgentSessionUpdateInput's fields. */
const sessionUpdateFields = ['addedExternalUrls', 'dismissedAt', 'externalLink', 'externalUrls', 'plan', 'removedExternalUrls', 'userState'];
/** Content fields per AgentActivityType (agent-interaction page): required, then optional. */
const activityContent: Record<string, [string[], string[]]> = {
  thought: [['body'], []], elicitation: [['body'], []], response: [['body'], []], error: [['body'], []], action: [['action', 'parameter'], ['result']],
};
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export interface RecordedCall {
  /** The root fields asked for, e.g. `issues` or `commentCreate`. */
  fields: string[];
  query: string;
  variables: Json;
  headers: IncomingHttpHeaders;
}

/** A scripted answer for one request instead of the fake's own. */
export interface FakeAnswer { status: number; body: unknown; headers?: Record<string, string>; delayMs?: number }

const priorityLabels = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

export const linearErrors = {
  authentication: (): FakeAnswer => ({ status: 400, body: { data: null, errors: [{ message: 'Authentication required, not authenticated', extensions: { type: 'authentication error', code: 'AUTHENTICATION_ERROR', userError: true, userPresentableMessage: 'You need to authenticate to access this operation.' } }] } }),
  rateLimited: (resetAt: number, status = 400): FakeAnswer => ({
    status,
    body: { data: null, errors: [{ message: 'Rate limit exceeded', extensions: { type: 'ratelimited', code: 'RATELIMITED', userError: true, userPresentableMessage: 'Too many requests: slow down.' } }] },
    headers: { 'X-RateLimit-Requests-Limit': '1500', 'X-RateLimit-Requests-Remaining': '0', 'X-RateLimit-Requests-Reset': String(resetAt) },
  }),
  internal: (): FakeAnswer => ({ status: 500, body: { errors: [{ message: 'Internal server error', extensions: { type: 'internal error', code: 'INTERNAL_SERVER_ERROR' } }] } }),
};

export class FakeLinear {
  readonly apiKey = `lin_api_${'k'.repeat(8)}${randomUUID().replace(/-/g, '')}`;
  readonly oauthToken = `lin_oauth_${randomUUID().replace(/-/g, '')}`;
  readonly viewer: FakeUser = person('Ada Lovelace', 'ada@example.com');
  /** The viewer, a member (Grace), a guest (Gil) and a member (Linus). */
  readonly users: FakeUser[] = [this.viewer, person('Grace Hopper', 'grace@example.com'), person('Gil Guest', 'gil@example.com', { guest: true }), person('Linus Member', 'linus@example.com')];
  readonly teams: FakeTeam[] = [team('ENG', 'Engineering'), team('OPS', 'Operations')];
  readonly issues: FakeIssue[] = [];
  readonly comments: FakeComment[] = [];
  readonly organizationId = 'org-1';
  readonly agentSessions: FakeAgentSession[] = [];
  readonly calls: RecordedCall[] = [];
  /** Answers for the next requests, in order, before the fake's own (a matching `when` only). */
  private readonly scripted: { when: (call: RecordedCall) => boolean; answer: FakeAnswer }[] = [];
  /** Holds answers of matching requests until released (the request is handled first). */
  private readonly holds: { when: (call: RecordedCall) => boolean; release: Promise<void> }[] = [];
  /** The fake's time, five minutes on per change; tests may set it (to now, for comments read against Factory's clock). */
  clock = Date.parse('2026-11-01T09:00:00.000Z');

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<FakeLinear> {
    let fake: FakeLinear | undefined;
    const server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        void fake!.handle(request.method ?? '', request.url ?? '', request.headers, body).then(({ status, body: answer, headers }) => {
          response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(answer));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeLinear(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    return fake;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  team(key: string): FakeTeam {
    return this.teams.find((candidate) => candidate.key === key)!;
  }

  /** A new issue in a team (ENG by default), in the state named (default Todo); `updatedAt` = now. */
  addIssue(fields: { title: string; team?: string; state?: string; labels?: string[]; assignee?: FakeUser | null; description?: string; priority?: number }): FakeIssue {
    const owner = this.team(fields.team ?? 'ENG');
    const number = this.issues.filter((issue) => issue.team === owner).length + 1;
    const at = this.tick();
    const issue: FakeIssue = {
      id: randomUUID(), identifier: `${owner.key}-${number}`, number, title: fields.title, description: fields.description ?? null,
      priority: fields.priority ?? 0, createdAt: at, updatedAt: at, archivedAt: null, team: owner,
      state: this.state(owner, fields.state ?? 'Todo'), assignee: fields.assignee ?? null,
      labels: (fields.labels ?? []).map((name) => ({ id: `label-${name}`, name, color: '#5e6ad2' })),
    };
    this.issues.push(issue);
    return issue;
  }

  /** Changes an issue as a person would in Linear; returns the webhook's `updatedFrom`. */
  update(issue: FakeIssue, change: { state?: string; labels?: string[]; assignee?: FakeUser | null; title?: string }): Json {
    const updatedFrom: Json = { updatedAt: issue.updatedAt };
    if (change.state !== undefined) {
      updatedFrom.stateId = issue.state.id;
      issue.state = this.state(issue.team, change.state);
    }
    if (change.labels !== undefined) {
      updatedFrom.labelIds = issue.labels.map((label) => label.id);
      issue.labels = change.labels.map((name) => ({ id: `label-${name}`, name, color: '#5e6ad2' }));
    }
    if (change.assignee !== undefined) {
      updatedFrom.assigneeId = issue.assignee?.id ?? null;
      issue.assignee = change.assignee;
    }
    if (change.title !== undefined) {
      updatedFrom.title = issue.title;
      issue.title = change.title;
    }
    issue.updatedAt = this.tick();
    return updatedFrom;
  }

  /** The next answer of a request matching `when` (default: any) is `answer`. */
  script(answer: FakeAnswer, when: (call: RecordedCall) => boolean = () => true): void {
    this.scripted.push({ when, answer });
  }

  /**
   * What the server sends instead of its own answer to every request, for a server (or a proxy in
   * front of it) that goes wrong every time: echoing the request, paging without end. Unset: the
   * fake's own answer.
   */
  misbehave: ((request: { headers: IncomingHttpHeaders; variables: Json }, answer: FakeAnswer) => FakeAnswer) | undefined;

  /** Requests matching `when` are carried out, but answered only once `release` resolves. */
  hold(when: (call: RecordedCall) => boolean, release: Promise<void>): void {
    this.holds.push({ when, release });
  }

  /** The calls that asked for this root field. */
  callsOf(field: string): RecordedCall[] {
    return this.calls.filter((call) => call.fields.includes(field));
  }

  commentsOn(issue: FakeIssue): FakeComment[] {
    return this.comments.filter((comment) => comment.issueId === issue.id);
  }

  /** A comment made in Linear by a person (default: the second user, not the viewer). */
  addComment(issue: FakeIssue, body: string, author: FakeUser = this.users[1]!): FakeComment {
    const at = this.tick();
    const comment: FakeComment = { id: randomUUID(), issueId: issue.id, body, createdAt: at, updatedAt: at, user: author };
    this.comments.push(comment);
    return comment;
  }

  // ─── Webhooks ───

  /** Linear's webhook envelope for an issue event (EntityWebhookPayload). */
  webhookPayload(action: 'create' | 'update' | 'remove', issue: FakeIssue, updatedFrom?: Json, at = Date.now()): Json {
    return {
      action, type: 'Issue', createdAt: new Date(at).toISOString(), organizationId: 'org-1', webhookId: 'webhook-1', webhookTimestamp: at,
      url: issueUrl(issue), actor: { id: this.viewer.id, name: this.viewer.name, type: 'user' },
      ...(action === 'update' ? { updatedFrom: updatedFrom ?? { updatedAt: issue.updatedAt } } : {}),
      data: webhookIssue(issue),
    };
  }

  /** Linear's webhook for a comment made (`Comment` create; CommentWebhookPayload: the issue and the user as children). */
  commentWebhookPayload(comment: FakeComment, at = Date.now()): Json {
    const issue = this.issues.find((candidate) => candidate.id === comment.issueId)!;
    const user = { id: comment.user.id, name: comment.user.name, email: comment.user.email, avatarUrl: null, url: `https://linear.app/acme/profiles/${userView(comment.user).displayName}` };
    return {
      action: 'create', type: 'Comment', createdAt: new Date(at).toISOString(), organizationId: 'org-1', webhookId: 'webhook-1', webhookTimestamp: at,
      url: `${issueUrl(issue)}#comment-${comment.id.slice(0, 8)}`, actor: { id: comment.user.id, name: comment.user.name, type: 'user' },
      data: {
        id: comment.id, body: comment.body, createdAt: comment.createdAt, updatedAt: comment.updatedAt, editedAt: null, reactionData: [],
        issueId: issue.id, issue: { id: issue.id, identifier: issue.identifier, title: issue.title, url: issueUrl(issue), teamId: issue.team.id }, userId: comment.user.id, user,
      },
    };
  }

  /** Sends a webhook as Linear does: the raw JSON body signed with HMAC-SHA256 (hex) in `Linear-Signature`. */
  async deliver(url: string, payload: Json, options: { secret?: string; deliveryId?: string; signature?: string | null; rawBody?: string } = {}): Promise<{ status: number; body: any }> {
    const body = options.rawBody ?? JSON.stringify(payload);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json; charset=utf-8', 'User-Agent': 'Linear-Webhook',
      'Linear-Delivery': options.deliveryId ?? randomUUID(), 'Linear-Event': String(payload.type ?? 'Issue'),
    };
    const signature = options.signature === undefined ? (options.secret ? createHmac('sha256', options.secret).update(body).digest('hex') : undefined) : options.signature;
    if (signature !== null && signature !== undefined) headers['Linear-Signature'] = signature;
    const response = await fetch(url, { method: 'POST', headers, body });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  // ─── Agent sessions ───

  /** Linear opens a session for the app on an issue (delegated, or mentioned in a comment). */
  openAgentSession(issue: FakeIssue, options: { comment?: string; creator?: FakeUser } = {}): FakeAgentSession {
    const creator = options.creator ?? this.users[1]!;
    const session: FakeAgentSession = {
      id: randomUUID(), issue, organizationId: this.organizationId, creator, externalUrls: [], activities: [],
      ...(options.comment ? { comment: this.addComment(issue, options.comment, creator) } : {}),
    };
    this.agentSessions.push(session);
    return session;
  }

  /** The agent's activities in a session, in the order Linear took them (prompts left out). */
  agentActivities(session: FakeAgentSession): FakeAgentActivity[] {
    return session.activities.filter((activity) => activity.content.type !== 'prompt');
  }

  /** A person writes in the session (or presses stop): the prompt activity a `prompted` event carries. */
  prompt(session: FakeAgentSession, body: string, options: { signal?: 'stop'; user?: FakeUser } = {}): FakeAgentActivity {
    const user = options.user ?? session.creator;
    const activity: FakeAgentActivity = {
      id: randomUUID(), agentSessionId: session.id, content: { type: 'prompt', body }, signal: options.signal ?? null, signalMetadata: null,
      ephemeral: false, createdAt: this.tick(), userId: user.id,
    };
    session.activities.push(activity);
    return activity;
  }

  /** AgentSessionEventWebhookPayload for `created` (with promptContext) or `prompted` (with the person's activity). */
  agentSessionPayload(action: 'created' | 'prompted', session: FakeAgentSession, activity?: FakeAgentActivity, at = Date.now()): Json {
    const { issue } = session;
    const user = (id: string | undefined) => this.users.find((candidate) => candidate.id === id) ?? session.creator;
    const userPayload = (person: FakeUser) => ({ id: person.id, name: person.name, email: person.email, url: `https://linear.app/acme/profiles/${person.id}`, avatarUrl: null });
    return {
      type: 'AgentSessionEvent', action, createdAt: new Date(at).toISOString(), organizationId: session.organizationId,
      oauthClientId: this.oauthApp.clientId, appUserId: this.appUser.id, webhookId: 'webhook-agent-1', webhookTimestamp: at,
      agentSession: {
        id: session.id, type: 'commentThread', status: action === 'created' ? 'pending' : 'active', appUserId: this.appUser.id, organizationId: session.organizationId,
        createdAt: new Date(at).toISOString(), updatedAt: new Date(at).toISOString(), creatorId: session.creator.id, creator: userPayload(session.creator),
        issueId: issue.id, issue: { id: issue.id, identifier: issue.identifier, title: issue.title, description: issue.description, url: issueUrl(issue), teamId: issue.team.id, team: teamView(issue.team) },
        ...(session.comment ? { commentId: session.comment.id, comment: { id: session.comment.id, body: session.comment.body, issueId: issue.id, userId: session.comment.user.id } } : {}),
        url: `https://linear.app/acme/issue/${issue.identifier}#agent-session-${session.id}`,
      },
      ...(action === 'created'
        ? { promptContext: `<issue identifier="${issue.identifier}">\n<title>${issue.title}</title>\n<description>${issue.description ?? ''}</description>\n</issue>`, guidance: [] }
        : { agentActivity: {
          id: activity!.id, agentSessionId: session.id, content: activity!.content, signal: activity!.signal, signalMetadata: activity!.signalMetadata,
          createdAt: activity!.createdAt, updatedAt: activity!.createdAt, userId: activity!.userId, user: userPayload(user(activity!.userId)),
        } }),
    };
  }

  private createActivity(input: Json): FakeAgentActivity {
    for (const [field, required] of Object.entries(activityInputFields)) if (required && (input[field] === undefined || input[field] === null)) throw new ValidationFailure(`Field "AgentActivityCreateInput.${field}" of required type is not provided.`);
    for (const field of Object.keys(input)) if (!(field in activityInputFields)) throw new ValidationFailure(`Field "${field}" is not defined by type "AgentActivityCreateInput".`);
    if (input.signal !== undefined && input.signal !== null && !activitySignals.includes(input.signal)) throw new ValidationFailure(`Value "${input.signal}" does not exist in "AgentActivitySignal" enum.`);
    if (input.id !== undefined && !uuidV4.test(String(input.id))) throw new GraphQLError('Argument Validation Error: id must be a UUID v4');
    const content = input.content as Json;
    const shape = typeof content === 'object' && content !== null ? activityContent[String(content.type)] : undefined;
    if (!shape) throw new GraphQLError(`Argument Validation Error: content.type must be one of ${Object.keys(activityContent).join(', ')}`);
    const [required, optional] = shape;
    for (const field of required) if (typeof content[field] !== 'string') throw new GraphQLError(`Argument Validation Error: ${content.type} content needs ${field}`);
    for (const field of Object.keys(content)) if (field !== 'type' && !required.includes(field) && !optional.includes(field)) throw new GraphQLError(`Argument Validation Error: ${content.type} content has no field ${field}`);
    const session = this.agentSessions.find((candidate) => candidate.id === input.agentSessionId);
    if (!session) throw new GraphQLError('Entity not found: AgentSession');
    const existing = session.activities.find((activity) => activity.id === input.id);
    if (existing) return existing; // the same id again: a retry, not a second activity
    const activity: FakeAgentActivity = {
      id: input.id ?? randomUUID(), agentSessionId: session.id, content, signal: input.signal ?? null, signalMetadata: input.signalMetadata ?? null,
      ephemeral: input.ephemeral === true, createdAt: this.tick(),
    };
    session.activities.push(activity);
    return activity;
  }

  private updateSession(id: string, input: Json): FakeAgentSession {
    for (const field of Object.keys(input ?? {})) if (!sessionUpdateFields.includes(field)) throw new ValidationFailure(`Field "${field}" is not defined by type "AgentSessionUpdateInput".`);
    const session = this.agentSessions.find((candidate) => candidate.id === id);
    if (!session) throw new GraphQLError('Entity not found: AgentSession');
    const urls = (list: unknown) => (list as Json[]).map((entry) => {
      if (typeof entry.label !== 'string' || typeof entry.url !== 'string' || Object.keys(entry).length !== 2) throw new ValidationFailure('AgentSessionExternalUrlInput takes label and url');
      return { label: entry.label, url: entry.url };
    });
    if (input.externalUrls) session.externalUrls = urls(input.externalUrls);
    else {
      if (input.addedExternalUrls) session.externalUrls.push(...urls(input.addedExternalUrls));
      if (input.removedExternalUrls) session.externalUrls = session.externalUrls.filter((entry) => !(input.removedExternalUrls as string[]).includes(entry.url));
    }
    return session;
  }

  // ─── GraphQL ───

  private async handle(method: string, path: string, headers: IncomingHttpHeaders, text: string): Promise<FakeAnswer> {
    const own = await this.ownAnswer(method, path, headers, text);
    if (!this.misbehave) return own;
    let variables: Json = {};
    try {
      variables = JSON.parse(text).variables ?? {};
    } catch {
      // not JSON: no variables
    }
    return this.misbehave({ headers, variables }, own);
  }

  // ─── OAuth (PROVIDERS §8 "Install"; RFC 6749) ───

  /** The OAuth application registered at this Linear: its client id and secret. */
  readonly oauthApp = { clientId: `client_${randomUUID().replace(/-/g, '')}`, clientSecret: `secret_${randomUUID().replace(/-/g, '')}` };
  /** The app's own user: `viewer` for a token installed with actor=app. */
  readonly appUser: FakeUser & { app: true } = { id: randomUUID(), name: 'Factory Agent', email: 'factory-agent@oauthapp.linear.app', app: true };
  /** `expires_in` of the access tokens it issues (Linear: about a day). */
  tokenLifetimeSec = 86_399;
  /** Every authorize page opened (its query) and token request made (its form), in order. */
  readonly authorizeRequests: URLSearchParams[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  /** The next authorize page is refused by the person (`error=access_denied`). */
  denyNextAuthorize = false;
  private readonly codes = new Map<string, { redirectUri: string; actor: string | null }>();
  /** Access tokens issued, with when they expire and whether they act as the app. */
  private readonly accessTokens = new Map<string, { expiresAt: number; app: boolean; revoked?: boolean }>();
  private readonly refreshTokens = new Map<string, { app: boolean; revoked: boolean }>();
  private askingAs: FakeUser & { app?: boolean } = this.viewer;

  /** Linear forgets every refresh token (a person uninstalled the app): refreshing answers `invalid_grant`. */
  revokeRefreshTokens(): void {
    for (const entry of this.refreshTokens.values()) entry.revoked = true;
  }

  /** Linear stops taking the access tokens issued so far (expired early, or revoked): GraphQL answers as unauthenticated. */
  revokeAccessTokens(): void {
    for (const entry of this.accessTokens.values()) entry.revoked = true;
  }

  /** The tokens issued so far (access and refresh), for tests that look for them where they must not be. */
  issuedTokens(): string[] {
    return [...this.accessTokens.keys(), ...this.refreshTokens.keys()];
  }

  /** GET /oauth/authorize: the person approves at once; Linear redirects back with a code and the state, as it does. */
  private authorize(query: URLSearchParams): FakeAnswer {
    this.authorizeRequests.push(query);
    const redirectUri = query.get('redirect_uri') ?? '';
    if (query.get('client_id') !== this.oauthApp.clientId || !/^https?:\/\//.test(redirectUri)) return { status: 400, body: { error: 'invalid_request', error_description: 'Unknown client or redirect URI' } };
    const back = new URL(redirectUri);
    if (this.denyNextAuthorize) {
      this.denyNextAuthorize = false;
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user denied access');
    } else {
      const code = randomUUID().replace(/-/g, '');
      this.codes.set(code, { redirectUri, actor: query.get('actor') });
      back.searchParams.set('code', code);
    }
    if (query.get('state') !== null) back.searchParams.set('state', query.get('state')!);
    return { status: 302, body: '', headers: { Location: back.href } };
  }

  /** POST /oauth/token: authorization_code and refresh_token grants, form-encoded; refresh tokens rotate. */
  private token(headers: IncomingHttpHeaders, text: string): FakeAnswer {
    if (!String(headers['content-type']).startsWith('application/x-www-form-urlencoded')) return { status: 400, body: { error: 'invalid_request', error_description: 'Expected a form' } };
    const form = new URLSearchParams(text);
    this.tokenRequests.push(form);
    if (form.get('client_id') !== this.oauthApp.clientId || form.get('client_secret') !== this.oauthApp.clientSecret) return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed' } };
    const invalidGrant: FakeAnswer = { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
    let app: boolean;
    if (form.get('grant_type') === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (!code || code.redirectUri !== form.get('redirect_uri')) return invalidGrant;
      this.codes.delete(form.get('code')!);
      app = code.actor === 'app';
    } else if (form.get('grant_type') === 'refresh_token') {
      const refresh = this.refreshTokens.get(form.get('refresh_token') ?? '');
      if (!refresh || refresh.revoked) return invalidGrant;
      refresh.revoked = true;
      app = refresh.app;
    } else return { status: 400, body: { error: 'unsupported_grant_type' } };
    const accessToken = `lin_oauth_${randomUUID().replace(/-/g, '')}`;
    const refreshToken = `lin_refresh_${randomUUID().replace(/-/g, '')}`;
    this.accessTokens.set(accessToken, { expiresAt: Date.now() + this.tokenLifetimeSec * 1000, app });
    this.refreshTokens.set(refreshToken, { app, revoked: false });
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: this.tokenLifetimeSec, scope: 'read,write,app:assignable,app:mentionable', refresh_token: refreshToken } };
  }

  private async ownAnswer(method: string, path: string, headers: IncomingHttpHeaders, text: string): Promise<FakeAnswer> {
    const target = new URL(path, 'http://fake');
    if (method === 'GET' && target.pathname === '/oauth/authorize') return this.authorize(target.searchParams);
    if (method === 'POST' && target.pathname === '/oauth/token') return this.token(headers, text);
    if (method !== 'POST' || path !== '/graphql') return { status: 404, body: { errors: [{ message: 'Not found' }] } };
    if (!String(headers['content-type']).startsWith('application/json')) return { status: 400, body: { errors: [{ message: 'Expected application/json' }] } };
    let request: Json;
    try {
      request = JSON.parse(text);
    } catch {
      return { status: 400, body: { errors: [{ message: 'Body is not JSON', extensions: { code: 'BAD_REQUEST' } }] } };
    }
    const query = String(request.query ?? '');
    let selection: Selection[];
    try {
      selection = parseOperation(query);
      checkArgumentTypes(query, selection);
    } catch (error) {
      return validationError((error as Error).message);
    }
    const call: RecordedCall = { fields: selection.map((field) => field.name), query, variables: request.variables ?? {}, headers };
    this.calls.push(call);
    if (process.env.FAKE_LINEAR_LOG) appendFileSync(process.env.FAKE_LINEAR_LOG, JSON.stringify({ query, variables: call.variables }) + '\n');
    const authorization = String(headers.authorization ?? '');
    const issued = this.accessTokens.get(authorization.replace(/^Bearer /, ''));
    const signedIn = authorization === this.apiKey || authorization === `Bearer ${this.oauthToken}` || Boolean(authorization.startsWith('Bearer ') && issued && !issued.revoked && issued.expiresAt > Date.now());
    this.askingAs = issued?.app ? this.appUser : { ...this.viewer, app: false };
    const scriptedIndex = this.scripted.findIndex((entry) => entry.when(call));
    if (scriptedIndex >= 0) {
      const { answer } = this.scripted.splice(scriptedIndex, 1)[0]!;
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      return answer;
    }
    if (!signedIn) return linearErrors.authentication();
    const data: Json = {};
    try {
      for (const field of selection) data[field.alias ?? field.name] = project(this.resolve(field.name, call.variables, field.args), field.children, field.name);
    } catch (error) {
      if (error instanceof GraphQLError) return { status: 200, body: { data: null, errors: [{ message: error.message, extensions: { type: 'invalid input', code: 'INPUT_ERROR', userError: true } }] } };
      if (error instanceof ValidationFailure) return validationError(error.message);
      throw error;
    }
    for (const held of this.holds.filter((entry) => entry.when(call))) await held.release;
    return { status: 200, body: { data } };
  }

  private resolve(field: string, variables: Json, args: string): unknown {
    const arg = (name: string) => argument(args, name, variables);
    switch (field) {
      case 'user': {
        const user = this.users.find((candidate) => candidate.id === arg('id'));
        if (!user) throw new GraphQLError('Entity not found: User');
        return userView(user);
      }
      case 'viewer':
        return this.askingAs;
      case 'organization':
        return { id: this.organizationId, name: 'Acme', urlKey: 'acme' };
      case 'agentActivityCreate': {
        const activity = this.createActivity(arg('input') ?? {});
        return { success: true, lastSyncId: this.calls.length, agentActivity: { id: activity.id, content: activity.content, signal: activity.signal, ephemeral: activity.ephemeral } };
      }
      case 'agentSessionUpdate': {
        const session = this.updateSession(String(arg('id')), arg('input') ?? {});
        return { success: true, lastSyncId: this.calls.length, agentSession: { id: session.id, externalLinks: session.externalUrls } };
      }
      case 'teams':
        return { nodes: this.teams.filter((candidate) => matchesFilter(teamView(candidate), arg('filter') ?? {}, this.viewer)).map(teamView) };
      case 'workflowStates': {
        const all = this.teams.flatMap((owner) => owner.states.map((state) => ({ ...state, team: teamView(owner) })));
        return { nodes: all.filter((state) => matchesFilter(state, arg('filter') ?? {}, this.viewer)) };
      }
      case 'issues':
        return this.issueConnection(arg('filter') ?? {}, arg('first') ?? 50, arg('after'), arg('orderBy') ?? 'createdAt');
      case 'issue': {
        const id = arg('id');
        const issue = this.issues.find((candidate) => candidate.id === id || candidate.identifier === id);
        if (!issue) throw new GraphQLError('Entity not found: Issue');
        return { ...apiIssue(issue), comments: (commentArgs: string) => {
          const filter = argument(commentArgs, 'filter', variables) ?? {};
          return { nodes: this.commentsOn(issue).filter((comment) => matchesFilter(comment, filter, this.viewer)).map((comment) => ({ ...comment, user: userView(comment.user) })) };
        } };
      }
      case 'commentCreate': {
        const input = arg('input') ?? {};
        const issue = this.issues.find((candidate) => candidate.id === input.issueId);
        if (!issue || typeof input.body !== 'string') throw new GraphQLError('Entity not found: Issue');
        const at = this.tick();
        const comment: FakeComment = { id: randomUUID(), issueId: issue.id, body: input.body, createdAt: at, updatedAt: at, user: this.viewer };
        this.comments.push(comment);
        return { success: true, lastSyncId: this.calls.length, comment };
      }
      case 'commentUpdate': {
        const comment = this.comments.find((candidate) => candidate.id === arg('id'));
        if (!comment) throw new GraphQLError('Entity not found: Comment');
        comment.body = String(arg('input')?.body ?? comment.body);
        comment.updatedAt = this.tick();
        return { success: true, lastSyncId: this.calls.length, comment };
      }
      case 'issueUpdate': {
        const issue = this.issues.find((candidate) => candidate.id === arg('id') || candidate.identifier === arg('id'));
        if (!issue) throw new GraphQLError('Entity not found: Issue');
        const stateId = arg('input')?.stateId;
        const state = issue.team.states.find((candidate) => candidate.id === stateId);
        if (stateId !== undefined && !state) throw new GraphQLError('Entity not found: WorkflowState');
        if (state) issue.state = state;
        issue.updatedAt = this.tick();
        return { success: true, lastSyncId: this.calls.length, issue: apiIssue(issue) };
      }
      default:
        throw new ValidationFailure(`Cannot query field "${field}" on type "Query".`);
    }
  }

  /** Relay pagination over the filtered issues, newest first by `orderBy`; the cursor names the last item. */
  private issueConnection(filter: Json, first: number, after: string | undefined, orderBy: string): Json {
    if (first > 250) throw new GraphQLError('first must be at most 250');
    const sortKey = (issue: FakeIssue) => `${orderBy === 'updatedAt' ? issue.updatedAt : issue.createdAt}|${issue.id}`;
    const matching = this.issues.filter((issue) => !issue.archivedAt && matchesFilter(apiIssue(issue), filter, this.viewer)).sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : -1));
    const start = after === undefined ? 0 : matching.findIndex((issue) => sortKey(issue) < Buffer.from(after, 'base64url').toString());
    const page = start < 0 ? [] : matching.slice(start, start + first);
    const hasNextPage = start >= 0 && start + first < matching.length;
    const endCursor = page.length ? Buffer.from(sortKey(page.at(-1)!)).toString('base64url') : null;
    return { nodes: page.map(apiIssue), pageInfo: { hasNextPage, endCursor, hasPreviousPage: start > 0, startCursor: page.length ? Buffer.from(sortKey(page[0]!)).toString('base64url') : null } };
  }

  private state(owner: FakeTeam, name: string): FakeState {
    const state = owner.states.find((candidate) => candidate.name === name);
    if (!state) throw new Error(`fake: team ${owner.key} has no state ${name}`);
    return state;
  }

  /** Strictly increasing times, five minutes apart (changes spread over days, as in a real team). */
  private tick(): string {
    this.clock += 300_000;
    return new Date(this.clock).toISOString();
  }
}

/** A user as the API shows it: every User field the fake knows, with defaults. */
function userView(user: FakeUser): Required<FakeUser> {
  return { displayName: user.name.split(' ')[0]!.toLowerCase(), guest: false, active: true, ...user };
}

function person(name: string, email: string, flags: { guest?: boolean } = {}): FakeUser {
  return { id: randomUUID(), name, displayName: name.split(' ')[0]!.toLowerCase(), email, guest: flags.guest ?? false, active: true };
}

function team(key: string, name: string): FakeTeam {
  const states: [string, string][] = [['Backlog', 'backlog'], ['Todo', 'unstarted'], ['In Progress', 'started'], ['In Review', 'started'], ['Done', 'completed'], ['Canceled', 'canceled'], ['Duplicate', 'duplicate']];
  return { id: randomUUID(), key, name, states: states.map(([stateName, type]) => ({ id: randomUUID(), name: stateName, type, color: '#bec2c8' })) };
}

function teamView(owner: FakeTeam): Json {
  return { id: owner.id, key: owner.key, name: owner.name };
}

function issueUrl(issue: FakeIssue): string {
  return `https://linear.app/acme/issue/${issue.identifier}/${issue.title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40)}`;
}

/** The issue as the GraphQL API shows it (labels as a connection). */
function apiIssue(issue: FakeIssue): Json {
  return {
    id: issue.id, identifier: issue.identifier, number: issue.number, title: issue.title, description: issue.description,
    url: issueUrl(issue), priority: issue.priority, priorityLabel: priorityLabels[issue.priority], createdAt: issue.createdAt, updatedAt: issue.updatedAt,
    archivedAt: issue.archivedAt, state: issue.state, team: teamView(issue.team), assignee: issue.assignee,
    labels: { nodes: issue.labels },
  };
}

/** The issue as webhooks carry it (IssueWebhookPayload: labels as a plain array, ids beside objects). */
function webhookIssue(issue: FakeIssue): Json {
  const { labels: _connection, ...rest } = apiIssue(issue);
  return {
    ...rest, labels: issue.labels, labelIds: issue.labels.map((label) => label.id), teamId: issue.team.id, stateId: issue.state.id,
    assigneeId: issue.assignee?.id ?? null, assignee: issue.assignee ? { ...issue.assignee, url: `https://linear.app/acme/profiles/${issue.assignee.id}` } : null,
    previousIdentifiers: [], subscriberIds: [],
  };
}

// ─── Filters ───

/** Filter fields that name another entity (filtered by its own fields); the rest are scalars. */
const entityFields = new Set(['team', 'state', 'assignee', 'labels', 'issue']);
const scalarFields = new Set(['key', 'id', 'name', 'type', 'email', 'updatedAt', 'createdAt', 'body', 'title', 'identifier']);

/** Linear's filter semantics over plain objects: fields AND-ed, `and`/`or` lists, `some`/`every` over collections. */
function matchesFilter(value: unknown, filter: Json, viewer: FakeUser): boolean {
  for (const [name, condition] of Object.entries(filter)) {
    const field = (value as Json | null)?.[name];
    let ok: boolean;
    if (name === 'and') ok = (condition as Json[]).every((part) => matchesFilter(value, part, viewer));
    else if (name === 'or') ok = (condition as Json[]).some((part) => matchesFilter(value, part, viewer));
    else if (name === 'isMe') ok = ((value as Json | null)?.id === viewer.id) === condition.eq;
    else if (name === 'null') ok = (value === null || value === undefined) === condition;
    else if (name === 'some' || name === 'every') {
      const items: unknown[] = Array.isArray(value) ? value : ((value as Json | null)?.nodes ?? []);
      ok = name === 'some' ? items.some((item) => matchesFilter(item, condition, viewer)) : items.every((item) => matchesFilter(item, condition, viewer));
    } else if (entityFields.has(name)) ok = matchesFilter(field ?? null, condition, viewer);
    else if (scalarFields.has(name)) ok = compare(field, condition);
    else throw new ValidationFailure(`Field "${name}" is not defined by the filter input type.`);
    if (!ok) return false;
  }
  return true;
}

function compare(value: unknown, comparator: Json): boolean {
  const text = value === null || value === undefined ? undefined : String(value);
  const lower = text?.toLowerCase();
  for (const [name, expected] of Object.entries(comparator)) {
    const ok = {
      eq: () => text === String(expected), neq: () => text !== String(expected),
      in: () => (expected as unknown[]).map(String).includes(text!), nin: () => !(expected as unknown[]).map(String).includes(text!),
      eqIgnoreCase: () => lower === String(expected).toLowerCase(), neqIgnoreCase: () => lower !== String(expected).toLowerCase(),
      contains: () => text?.includes(String(expected)) ?? false, containsIgnoreCase: () => lower?.includes(String(expected).toLowerCase()) ?? false,
      startsWith: () => text?.startsWith(String(expected)) ?? false,
      gt: () => text !== undefined && text > String(expected), gte: () => text !== undefined && text >= String(expected),
      lt: () => text !== undefined && text < String(expected), lte: () => text !== undefined && text <= String(expected),
      null: () => (text === undefined) === expected,
    }[name];
    if (!ok) throw new ValidationFailure(`Field "${name}" is not defined by the comparator input type.`);
    if (!ok()) return false;
  }
  return true;
}

// ─── A small GraphQL reader: the operation's root fields, their arguments and selections ───

interface Selection { name: string; alias?: string; args: string; children: Selection[] }

class GraphQLError extends Error {}
class ValidationFailure extends Error {}

function validationError(message: string): FakeAnswer {
  return { status: 400, body: { errors: [{ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED', type: 'graphql error', userError: true } }] } };
}

/** The argument types of the agent mutations (schema.graphql), checked against the operation's variable declarations. */
const argumentTypes: Record<string, Record<string, string>> = {
  agentActivityCreate: { input: 'AgentActivityCreateInput!' },
  agentSessionUpdate: { id: 'String!', input: 'AgentSessionUpdateInput!' },
};

/** A variable passed where the schema expects another type, or a required argument left out: GRAPHQL_VALIDATION_FAILED. */
function checkArgumentTypes(query: string, selection: Selection[]): void {
  const declarations = query.slice(0, query.indexOf('{'));
  for (const field of selection) {
    for (const [name, type] of Object.entries(argumentTypes[field.name] ?? {})) {
      const variable = new RegExp(`(?:^|[\\s,(])${name}\\s*:\\s*\\$(\\w+)`).exec(field.args)?.[1];
      if (!variable) throw new ValidationFailure(`Field "${field.name}" argument "${name}" of type "${type}" is required, but it was not provided as a variable.`);
      const declared = new RegExp(`\\$${variable}\\s*:\\s*([\\w!\\[\\]]+)`).exec(declarations)?.[1];
      if (declared !== type) throw new ValidationFailure(`Variable "$${variable}" of type "${declared ?? 'undeclared'}" used in position expecting type "${type}".`);
    }
  }
}

/** The root selections of the one operation in `query` (variables' declarations skipped). */
function parseOperation(query: string): Selection[] {
  const open = query.indexOf('{');
  if (open < 0 || !/^\s*(query|mutation)?\b[^{]*$/.test(query.slice(0, open))) throw new Error('Syntax Error: expected an operation');
  const [selections, end] = parseSelections(query, open + 1);
  if (query.slice(end).trim()) throw new Error('Syntax Error: unexpected text after the operation');
  return selections;
}

function parseSelections(text: string, start: number): [Selection[], number] {
  const selections: Selection[] = [];
  let index = start;
  for (;;) {
    const match = /\s*(?:([A-Za-z_]\w*)\s*:\s*)?([A-Za-z_]\w*)|\s*(\})/y;
    match.lastIndex = index;
    const found = match.exec(text);
    if (!found) throw new Error(`Syntax Error: unexpected character at ${index}`);
    index = match.lastIndex;
    if (found[3]) return [selections, index];
    const selection: Selection = { name: found[2]!, ...(found[1] ? { alias: found[1] } : {}), args: '', children: [] };
    const rest = /\s*\(/y;
    rest.lastIndex = index;
    if (rest.exec(text)) {
      let depth = 1;
      let cursor = rest.lastIndex;
      while (depth > 0 && cursor < text.length) depth += text[cursor] === '(' ? 1 : text[cursor] === ')' ? -1 : 0, cursor++;
      selection.args = text.slice(rest.lastIndex, cursor - 1);
      index = cursor;
    }
    const brace = /\s*\{/y;
    brace.lastIndex = index;
    if (brace.exec(text)) [selection.children, index] = parseSelections(text, brace.lastIndex);
    selections.push(selection);
  }
}

/** One argument's value: `$variable` from the variables, or a literal written in the query (JSON-like). */
function argument(args: string, name: string, variables: Json): any {
  const found = new RegExp(`(?:^|[\\s,(])${name}\\s*:\\s*`).exec(args);
  if (!found) return undefined;
  const rest = args.slice(found.index + found[0].length);
  const variable = /^\$(\w+)/.exec(rest);
  if (variable) return variables[variable[1]!];
  return literal(rest, variables);
}

/** A GraphQL literal (object, list, string, number, enum, boolean, `$variable`) read from the start of `text`. */
function literal(text: string, variables: Json): any {
  let index = 0;
  const skip = () => {
    while (/[\s,]/.test(text[index] ?? '')) index++;
  };
  const value = (): any => {
    skip();
    const char = text[index];
    if (char === '{') {
      index++;
      const object: Json = {};
      for (skip(); text[index] !== '}'; skip()) {
        const key = /^\w+/.exec(text.slice(index))![0];
        index += key.length;
        skip();
        index++; // ':'
        object[key] = value();
      }
      index++;
      return object;
    }
    if (char === '[') {
      index++;
      const list: unknown[] = [];
      for (skip(); text[index] !== ']'; skip()) list.push(value());
      index++;
      return list;
    }
    if (char === '"') {
      const end = text.indexOf('"', index + 1);
      const string = text.slice(index + 1, end);
      index = end + 1;
      return string;
    }
    if (char === '$') {
      const name = /^\$(\w+)/.exec(text.slice(index))![1]!;
      index += name.length + 1;
      return variables[name];
    }
    const word = /^[\w.-]+/.exec(text.slice(index))![0];
    index += word.length;
    return word === 'true' ? true : word === 'false' ? false : word === 'null' ? null : /^-?\d/.test(word) ? Number(word) : word;
  };
  return value();
}

/** The value shaped by the selection: only the fields asked for; an unknown field is a validation error. */
function project(value: unknown, selection: Selection[], typeName: string): unknown {
  if (selection.length === 0 || value === null || value === undefined) return value ?? null;
  if (Array.isArray(value)) return value.map((item) => project(item, selection, typeName));
  const object = value as Json;
  const shaped: Json = {};
  for (const field of selection) {
    if (!(field.name in object)) throw new ValidationFailure(`Cannot query field "${field.name}" on type "${typeName}".`);
    const resolved = typeof object[field.name] === 'function' ? object[field.name](field.args) : object[field.name];
    shaped[field.alias ?? field.name] = project(resolved, field.children, field.name);
  }
  return shaped;
}
