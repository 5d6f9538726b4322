// A fake GitHub on a real node:http server on 127.0.0.1, speaking GitHub's REST API and webhooks as
// the production client meets them (PROVIDERS §3), so the client can be pointed at `url`:
//   - every request: `User-Agent` required (else 403, text/html as GitHub's front end answers);
//     `Authorization: Bearer <token>` or `token <token>` (else 401 Bad credentials / Requires
//     authentication); `Accept` and `X-GitHub-Api-Version` only recorded; the core rate limit
//     (x-ratelimit-* headers on every answer, 403 "API rate limit exceeded" at 0, 304s free);
//     `x-oauth-scopes` like a classic token; GitHub's error shapes {message, documentation_url, status}.
//   - GET /user, GET /rate_limit, GET /repos/{o}/{r} (404 when unknown or unreadable);
//   - GET /repos/{o}/{r}/issues with state, labels (all of them), assignee (login|none|*), creator,
//     since (updated_at >= since), sort (created|updated|comments), direction, per_page (≤100,
//     default 30), page; pull requests included (with `pull_request`); Link (prev/next/last/first,
//     absolute, every other query parameter kept); weak ETag and If-None-Match → 304 on every GET;
//   - GET|PATCH /repos/{o}/{r}/issues/{n}; GET|POST …/issues/{n}/comments (Link);
//     GET|PATCH|DELETE …/issues/comments/{id}; GET|POST|PUT|DELETE …/issues/{n}/labels and
//     DELETE …/issues/{n}/labels/{name} (404 "Label does not exist");
//   - /repositories/{id}/… as an alias of /repos/{o}/{r}/… (real Link headers point there; see
//     `repositoryIdLinks`), and GitHub Enterprise Server (`enterprise`: every path under /api/v3);
//   - pull request reviews (PROVIDERS §6): GET …/pulls/{n}, …/pulls/{n}/reviews[/{id}[/comments]],
//     …/pulls/{n}/comments and the repository's …/pulls/comments (since, sort, direction, Link, ETag),
//     and …/collaborators/{user}/permission (404 for someone who is not a collaborator);
//     the repository's issue comments GET …/issues/comments (since, sort, direction, Link, ETag);
//   - pull requests (PROVIDERS §6): GET …/pulls (head=owner:branch, state, base), POST …/pulls with
//     GitHub's 422 bodies ("A pull request already exists for owner:branch.", "No commits between
//     main and feature", head or base `invalid`), PATCH …/pulls/{n} (title, body, state, base), and
//     GET …/branches/{branch} (404 "Branch not found"); a repository's branches, commits and
//     default branch are a real bare git repository's when `hostGit` names one;
//   - webhooks: `payload()` builds issues / issue_comment / pull_request / ping bodies from the
//     fake's state (shapes from octokit/webhooks payload-examples), `deliver()` posts them with
//     X-GitHub-Event, X-GitHub-Delivery, X-GitHub-Hook-ID, X-Hub-Signature-256 and X-Hub-Signature.
// Like GitHub, a new comment or a label change bumps the issue's updated_at (a client that polls
// with `since` sees its own writes come back). Anything else answers 404 Not Found.

import { execFileSync } from 'node:child_process';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

type Json = Record<string, any>;

export interface FakeGitHubRepo {
  id: number; owner: string; name: string; fullName: string; private: boolean; readable: boolean; createdAt: string;
}

/** An issue's state, with GitHub's field names where they are GitHub's (labels and assignees are plain names here). */
export interface FakeGitHubIssue {
  /** The repository's full name, `owner/name`. */
  repo: string;
  id: number; node_id: string; number: number; title: string; body: string | null;
  /** The API URL and the web URL (…/issues/n, or …/pull/n for a pull request). */
  url: string; html_url: string;
  user: { login: string; id: number };
  labels: string[]; assignees: string[]; state: 'open' | 'closed'; state_reason: 'completed' | 'not_planned' | 'reopened' | null;
  pullRequest: boolean; comments: number;
  /** A pull request's head and base branches (default `feature-<n>` and `main`), and whether it was merged. */
  head?: string; base?: string; merged?: boolean;
  created_at: string; updated_at: string; closed_at: string | null;
}

export interface FakeGitHubComment { id: number; repo: string; issueNumber: number; body: string; user: { login: string; id: number }; created_at: string; updated_at: string }

/** A submitted pull request review; `state` as REST spells it (upper case; webhooks say it in lower case). */
export interface FakeGitHubReview {
  id: number; repo: string; number: number; user: { login: string; id: number }; body: string | null;
  state: 'COMMENTED' | 'CHANGES_REQUESTED' | 'APPROVED' | 'DISMISSED'; submitted_at: string; commit_id: string;
}

/** A comment on a line of a pull request's diff, in the review it was submitted with. */
export interface FakeGitHubReviewComment {
  id: number; repo: string; number: number; reviewId: number | null; path: string; line: number | null; body: string;
  user: { login: string; id: number }; created_at: string; updated_at: string;
}

/** GitHub's collaborator roles; `permission` answers the legacy one (maintain → write, triage → read). */
export type FakeGitHubRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read';

export interface FakeGitHubCall {
  method: string;
  /** The path as received (with /api/v3 on Enterprise), still URL-encoded, without the query. */
  path: string;
  /** The request target exactly as received, query included. */
  url: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status answered (0 until the answer is decided). */
  status: number;
}

/** A scripted answer: `body` undefined sends no body, a string is sent as it is (text/html), anything else as JSON. */
export interface FakeGitHubAnswer { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }

export interface IssueFields {
  title: string; body?: string | null; labels?: string[]; assignees?: string[]; state?: 'open' | 'closed'; pullRequest?: boolean;
  /** A pull request's head branch (default `feature-<n>`) and base (default `main`). */
  head?: string; base?: string;
  /** Who opened it (default `monalisa`, a person, not the token's user). */
  author?: string;
}

export interface IssueChange { title?: string; body?: string; labels?: string[]; assignees?: string[]; state?: 'open' | 'closed' }

/** Extras of an `issues` or `pull_request` payload; each defaults to what the last `update()` of the issue did. */
export interface IssuesPayloadExtra {
  /** labeled/unlabeled: the label's name (default: the last one added / removed by `update()`, else the issue's last label). */
  label?: string;
  /** edited: `{title: {from}, body: {from}}` (default: what the last `update()` changed, else `{}`). */
  changes?: object;
  /** assigned/unassigned: the login (default: the last one added / removed by `update()`, else the first assignee). */
  assignee?: string;
  /** Who did it (default `monalisa`). */
  sender?: string;
}

export interface CommentPayloadExtra { changes?: object; sender?: string }
export interface PingPayloadExtra { events?: string[]; url?: string; contentType?: 'json' | 'form'; sender?: string }

const docs = 'https://docs.github.com/rest';
const rateDocs = 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api';
const person = 'monalisa';
const enterpriseVersion = '3.17.0';
const labelColors = ['d73a4a', '0075ca', 'cfd3d7', 'a2eeef', '7057ff', '008672', 'e4e669', 'd876e3', 'fbca04', '0e8a16'];
const zen = ['Design for failure.', 'Keep it logically awesome.', 'Speak like a human.', 'Practicality beats purity.', 'Non-blocking is better than blocking.', 'Approachable is better than simple.'];

function error(status: number, message: string, documentationUrl = docs, extra: Json = {}): FakeGitHubAnswer {
  return { status, body: { message, ...extra, documentation_url: documentationUrl, status: String(status) } };
}

function requestId(): string {
  const hex = () => randomBytes(2).toString('hex').toUpperCase();
  return `${hex()}:${hex()}${hex()}:${hex()}${hex()}:${hex()}${hex()}:${hex()}${hex()}`;
}

/** Answers to script, as GitHub gives them. */
export const githubErrors = {
  badCredentials: (): FakeGitHubAnswer => error(401, 'Bad credentials'),
  notFound: (): FakeGitHubAnswer => error(404, 'Not Found'),
  /** The primary (core) limit exhausted: 403 with x-ratelimit-remaining 0 until `reset` (epoch seconds). */
  rateLimited: (reset: number, userId = 1, status = 403): FakeGitHubAnswer => ({
    ...error(status, `API rate limit exceeded for user ID ${userId}. If you reach out to GitHub Support for help, please include the request ID ${requestId()} and timestamp ${new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}.`, rateDocs),
    headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-used': '5000', 'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': 'core' },
  }),
  /** A secondary rate limit: 403 (or 429) with retry-after, while the primary limit still has room. */
  secondaryRateLimit: (retryAfterSeconds = 60, status = 403): FakeGitHubAnswer => ({
    ...error(status, `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId()}.`, `${rateDocs}#about-secondary-rate-limits`),
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  serverError: (status = 500): FakeGitHubAnswer => ({ status, body: { message: 'Server Error' } }),
};

export class FakeGitHub {
  readonly token = `ghp_${randomBytes(27).toString('base64').replace(/[^A-Za-z0-9]/g, '0').slice(0, 36)}`;
  readonly user = { login: 'factory-bot', id: 1, name: 'Factory Bot' };
  /** The classic-token scopes sent as `x-oauth-scopes` on authenticated answers; null omits it (fine-grained tokens). */
  scopes: string | null = 'repo, read:org';
  readonly hookId = 480_000_000 + Math.floor(Math.random() * 1_000_000);
  readonly calls: FakeGitHubCall[] = [];
  rateLimit = { limit: 5000, remaining: 5000, reset: Math.floor(Date.now() / 1000) + 3600 };
  /** The web root of html_url links: https://github.com, or the server itself on Enterprise. */
  readonly webUrl: string;
  private readonly repos = new Map<string, FakeGitHubRepo & { labels: Map<string, { id: number; name: string; color: string }> }>();
  private readonly issues: FakeGitHubIssue[] = [];
  private readonly commentList: FakeGitHubComment[] = [];
  private readonly reviewList: FakeGitHubReview[] = [];
  private readonly reviewCommentList: FakeGitHubReviewComment[] = [];
  /** Collaborator roles by `owner/name` then login, both lower case; the owner and the token's user are admins. */
  private readonly roles = new Map<string, Map<string, FakeGitHubRole>>();
  private readonly userIds = new Map<string, number>([[this.user.login, this.user.id]]);
  private readonly lastChange = new WeakMap<FakeGitHubIssue, { changes: Json; labelsAdded: string[]; labelsRemoved: string[]; assigneesAdded: string[]; assigneesRemoved: string[] }>();
  private readonly scripted: { when: (call: FakeGitHubCall) => boolean; answer: FakeGitHubAnswer }[] = [];
  private readonly holds: { when: (call: FakeGitHubCall) => boolean; release: Promise<void> }[] = [];
  /** The fake's time, three minutes on per change; tests may set it (to now, for comments read against Factory's clock). */
  clock = Date.parse('2026-11-01T09:00:00Z');
  private nextId = { repo: 700_000_000, issue: 2_400_000_000, pull: 1_900_000_000, comment: 3_100_000_000, label: 8_000_000_000, user: 90_000_000, review: 1_600_000_000, reviewComment: 1_700_000_000 };

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly enterprise: boolean,
    /** Link headers on /repositories/{id}/… as api.github.com really sends them, instead of /repos/{o}/{r}/…. */
    readonly repositoryIdLinks: boolean,
  ) {
    this.webUrl = enterprise ? url.replace(/\/api\/v3$/, '') : 'https://github.com';
  }

  /** `enterprise`: the API is under /api/v3 (GitHub Enterprise Server); `repositoryIdLinks`: see the property. */
  static async start(options: { enterprise?: boolean; repositoryIdLinks?: boolean } = {}): Promise<FakeGitHub> {
    let fake: FakeGitHub | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        fake!.handle(request.method ?? 'GET', request.url ?? '/', request.headers, Buffer.concat(chunks).toString('utf8'))
          .catch((failure: unknown): FakeGitHubAnswer => {
            console.error('fake GitHub:', failure);
            return fake!.withDefaults({ status: 500, body: { message: String(failure) } });
          })
          .then(({ status, body, headers }) => {
            if (response.destroyed) return;
            const text = body === undefined || status === 304 || status === 204 ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
            const contentType = typeof body === 'string' ? { 'content-type': 'text/html; charset=utf-8' } : {};
            response.writeHead(status, { ...contentType, ...headers }).end(text);
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const root = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    fake = new FakeGitHub(server, options.enterprise ? `${root}/api/v3` : root, options.enterprise ?? false, options.repositoryIdLinks ?? false);
    return fake;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  // ─── State ───

  /** A repository (again: changes its options). Unknown repositories are added by `addIssue`. */
  addRepo(fullName: string, options: { private?: boolean; readable?: boolean } = {}): FakeGitHubRepo {
    const [owner, name] = fullName.split('/');
    if (!owner || !name) throw new Error(`not a repository name: ${fullName}`);
    let repo = this.repos.get(fullName.toLowerCase());
    if (!repo) {
      repo = { id: this.nextId.repo++, owner, name, fullName, private: false, readable: true, createdAt: this.tick(), labels: new Map() };
      this.repos.set(fullName.toLowerCase(), repo);
    }
    if (options.private !== undefined) repo.private = options.private;
    if (options.readable !== undefined) repo.readable = options.readable;
    return repo;
  }

  /** A new issue (or pull request), numbered per repository from 1; created_at = updated_at = now on the fake clock. */
  addIssue(fullName: string, fields: IssueFields): FakeGitHubIssue {
    const repo = this.repos.get(fullName.toLowerCase()) ?? this.addRepo(fullName);
    const at = this.tick();
    const closed = fields.state === 'closed';
    const id = this.nextId.issue++;
    const number = this.issues.filter((other) => other.repo === repo.fullName).length + 1;
    const pullRequest = fields.pullRequest ?? false;
    const author = this.userJson(fields.author ?? person);
    const issue: FakeGitHubIssue = {
      repo: repo.fullName, id, node_id: nodeId(pullRequest ? 'PR_kwDO' : 'I_kwDO', id), number, title: fields.title, body: fields.body ?? null,
      url: `${this.url}/repos/${repo.fullName}/issues/${number}`, html_url: `${this.webUrl}/${repo.fullName}/${pullRequest ? 'pull' : 'issues'}/${number}`,
      user: { login: author.login, id: author.id }, labels: this.labelNames(repo.fullName, fields.labels ?? []), assignees: [...(fields.assignees ?? [])],
      state: closed ? 'closed' : 'open', state_reason: closed ? 'completed' : null, pullRequest, comments: 0,
      ...(pullRequest ? { head: fields.head ?? `feature-${number}`, base: fields.base ?? 'main', merged: false } : {}),
      created_at: at, updated_at: at, closed_at: closed ? at : null,
    };
    this.issues.push(issue);
    return issue;
  }

  /** Changes an issue as a person would on github.com; bumps updated_at. Returns the `changes` of an `edited` webhook. */
  update(issue: FakeGitHubIssue, change: IssueChange): Json {
    const changes: Json = {};
    const before = { labels: issue.labels, assignees: issue.assignees };
    if (change.title !== undefined && change.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = change.title;
    }
    if (change.body !== undefined && change.body !== issue.body) {
      changes.body = { from: issue.body ?? '' };
      issue.body = change.body;
    }
    if (change.labels !== undefined) issue.labels = this.labelNames(issue.repo, change.labels);
    if (change.assignees !== undefined) issue.assignees = [...change.assignees];
    issue.updated_at = this.tick();
    if (change.state !== undefined && change.state !== issue.state) {
      issue.state = change.state;
      issue.state_reason = change.state === 'closed' ? 'completed' : 'reopened';
      issue.closed_at = change.state === 'closed' ? issue.updated_at : null;
    }
    const without = (list: string[], other: string[]) => list.filter((name) => !other.some((candidate) => candidate.toLowerCase() === name.toLowerCase()));
    this.lastChange.set(issue, {
      changes, labelsAdded: without(issue.labels, before.labels), labelsRemoved: without(before.labels, issue.labels),
      assigneesAdded: without(issue.assignees, before.assignees), assigneesRemoved: without(before.assignees, issue.assignees),
    });
    return changes;
  }

  issue(fullName: string, number: number): FakeGitHubIssue | undefined {
    return this.issues.find((issue) => issue.repo.toLowerCase() === fullName.toLowerCase() && issue.number === number);
  }

  /** A comment by someone (default `monalisa`) as made on github.com; bumps the issue's updated_at. */
  addComment(fullName: string, number: number, body: string, options: { author?: string } = {}): FakeGitHubComment {
    const issue = this.issue(fullName, number);
    if (!issue) throw new Error(`no issue ${fullName}#${number} in the fake GitHub`);
    const at = this.tick();
    const author = this.userJson(options.author ?? person);
    const comment: FakeGitHubComment = { id: this.nextId.comment++, repo: issue.repo, issueNumber: issue.number, body, user: { login: author.login, id: author.id }, created_at: at, updated_at: at };
    this.commentList.push(comment);
    issue.comments++;
    issue.updated_at = at;
    return comment;
  }

  /** The comments on an issue, oldest first. */
  comments(fullName: string, number: number): FakeGitHubComment[] {
    return this.commentList.filter((comment) => comment.repo.toLowerCase() === fullName.toLowerCase() && comment.issueNumber === number);
  }

  labelsOf(issue: FakeGitHubIssue): string[] {
    return [...issue.labels];
  }

  /** The next request matching `when` (default: any) gets `answer` instead, after being recorded; the fake's state and rate limit are untouched. */
  script(answer: FakeGitHubAnswer, when: (call: FakeGitHubCall) => boolean = () => true): void {
    this.scripted.push({ when, answer });
  }

  /**
   * What the server sends instead of its own answer to every request, for a server (or a proxy in
   * front of it) that goes wrong every time: echoing the request, paging without end, linking to
   * another origin. Unset: the fake's own answer.
   */
  misbehave: ((call: FakeGitHubCall, answer: FakeGitHubAnswer) => FakeGitHubAnswer) | undefined;

  /** Requests matching `when` are carried out, but answered only once `release` resolves. */
  hold(when: (call: FakeGitHubCall) => boolean, release: Promise<void>): void {
    this.holds.push({ when, release });
  }

  /** The calls of a method whose path (below the API root) matches. */
  callsTo(method: string, path: string | RegExp): FakeGitHubCall[] {
    return this.calls.filter((call) => call.method === method && (typeof path === 'string' ? call.path === path : path.test(call.path)));
  }

  // ─── Pull request reviews ───

  /**
   * A review submitted on a pull request by `author` (default `monalisa`), with its line comments,
   * as GitHub stores it: a line comment made on its own is a review too (state COMMENTED, body
   * null). `id` and the comments' ids may be given, to match an example payload.
   */
  addReview(fullName: string, number: number, fields: { state: FakeGitHubReview['state']; body?: string | null; author?: string; id?: number; comments?: { path: string; line?: number | null; body: string; id?: number }[] }): { review: FakeGitHubReview; comments: FakeGitHubReviewComment[] } {
    const pull = this.issue(fullName, number);
    if (!pull?.pullRequest) throw new Error(`no pull request ${fullName}#${number} in the fake GitHub`);
    const at = this.tick();
    const author = this.userJson(fields.author ?? person);
    const user = { login: author.login, id: author.id };
    const review: FakeGitHubReview = { id: fields.id ?? this.nextId.review++, repo: pull.repo, number, user, body: fields.body ?? null, state: fields.state, submitted_at: at, commit_id: sha(`${pull.id}head`) };
    const comments = (fields.comments ?? []).map((comment): FakeGitHubReviewComment => ({
      id: comment.id ?? this.nextId.reviewComment++, repo: pull.repo, number, reviewId: review.id, path: comment.path, line: comment.line ?? null, body: comment.body, user, created_at: at, updated_at: at,
    }));
    this.reviewList.push(review);
    this.reviewCommentList.push(...comments);
    pull.updated_at = at;
    return { review, comments };
  }

  /** Sets `login`'s role on the repository; null: not a collaborator (the permission answer is 404). */
  setRole(fullName: string, login: string, role: FakeGitHubRole | null): void {
    const repo = this.knownRepo(fullName).fullName.toLowerCase();
    const roles = this.roles.get(repo) ?? new Map<string, FakeGitHubRole>();
    if (role === null) roles.delete(login.toLowerCase());
    else roles.set(login.toLowerCase(), role);
    this.roles.set(repo, roles);
  }

  /** Merges (or only closes) a pull request as a person on github.com would. */
  closePull(pull: FakeGitHubIssue, options: { merged: boolean }): void {
    this.update(pull, { state: 'closed' });
    pull.merged = options.merged;
  }

  // ─── Webhooks ───

  /** A webhook body as GitHub sends it, built from the fake's current state. */
  payload(event: 'issues', action: string, issue: FakeGitHubIssue, extra?: IssuesPayloadExtra): Json;
  payload(event: 'pull_request', action: string, pullRequest: FakeGitHubIssue, extra?: IssuesPayloadExtra): Json;
  /** Without `comment`: `created` makes a new comment by the sender (default `monalisa`), `edited`/`deleted` take the issue's last one. */
  payload(event: 'issue_comment', action: 'created' | 'edited' | 'deleted', issue: FakeGitHubIssue, comment?: { id: number; body?: string }, extra?: CommentPayloadExtra): Json;
  /** `repo` defaults to the first repository added. */
  payload(event: 'ping', repo?: string, extra?: PingPayloadExtra): Json;
  payload(event: 'issues' | 'pull_request' | 'issue_comment' | 'ping', ...args: any[]): Json {
    if (event === 'ping') {
      const [fullName, extra = {}] = args as [string | undefined, PingPayloadExtra?];
      const repo = fullName === undefined ? [...this.repos.values()][0] : this.knownRepo(fullName);
      if (!repo) throw new Error('payload(ping): add a repository first');
      const hook = `${this.url}/repos/${repo.fullName}/hooks/${this.hookId}`;
      return {
        zen: zen[this.hookId % zen.length], hook_id: this.hookId,
        hook: {
          type: 'Repository', id: this.hookId, name: 'web', active: true, events: extra.events ?? ['issues', 'issue_comment'],
          config: { content_type: extra.contentType ?? 'json', insecure_ssl: '0', url: extra.url ?? 'https://factory.example.com/hooks' },
          updated_at: stamp(this.clock), created_at: stamp(this.clock), url: hook, test_url: `${hook}/test`, ping_url: `${hook}/pings`, deliveries_url: `${hook}/deliveries`,
          last_response: { code: null, status: 'unused', message: null },
        },
        repository: this.repoJson(repo, false), sender: this.userJson(extra.sender ?? person),
      };
    }
    const [action, issue] = args as [string, FakeGitHubIssue];
    const repo = this.knownRepo(issue.repo);
    const envelope = (body: Json, sender?: string) => ({ action, ...body, repository: this.repoJson(repo, false), sender: this.userJson(sender ?? person) });
    if (event === 'issue_comment') {
      const [, , given, extra = {}] = args as [string, FakeGitHubIssue, { id: number; body?: string } | undefined, CommentPayloadExtra?];
      const sender = this.userJson(extra.sender ?? person);
      const comment: FakeGitHubComment | undefined = given
        ? this.commentList.find((candidate) => candidate.id === given.id) ?? { id: given.id, repo: issue.repo, issueNumber: issue.number, body: given.body ?? '', user: { login: sender.login, id: sender.id }, created_at: issue.updated_at, updated_at: issue.updated_at }
        : action === 'created' ? this.addComment(issue.repo, issue.number, 'A comment.', { author: extra.sender ?? person }) : this.comments(issue.repo, issue.number).at(-1);
      if (!comment) throw new Error(`payload(issue_comment, ${action}): the issue has no comment`);
      return envelope({ ...(action === 'edited' ? { changes: extra.changes ?? {} } : {}), issue: this.issueJson(issue), comment: this.commentJson(comment, issue) }, extra.sender);
    }
    const extra = (args[2] ?? {}) as IssuesPayloadExtra;
    const last = this.lastChange.get(issue);
    const body: Json = {};
    if (event === 'pull_request') {
      body.number = issue.number;
      body.pull_request = this.pullJson(issue);
    } else {
      body.issue = this.issueJson(issue);
    }
    if (action === 'edited') body.changes = extra.changes ?? last?.changes ?? {};
    if (action === 'labeled' || action === 'unlabeled') {
      const name = extra.label ?? (action === 'labeled' ? last?.labelsAdded.at(-1) ?? issue.labels.at(-1) : last?.labelsRemoved.at(-1));
      if (name === undefined) throw new Error(`payload(${event}, ${action}): name the label (extra.label)`);
      body.label = this.labelJson(repo, name);
    }
    if (action === 'assigned' || action === 'unassigned') {
      const login = extra.assignee ?? (action === 'assigned' ? last?.assigneesAdded.at(-1) ?? issue.assignees[0] : last?.assigneesRemoved.at(-1));
      if (login === undefined) throw new Error(`payload(${event}, ${action}): name the assignee (extra.assignee)`);
      body.assignee = this.userJson(login);
    }
    return envelope(body, extra.sender);
  }

  /**
   * Posts a webhook as GitHub does. The signature is the hex HMAC of the raw body as sent (the
   * form-encoded one with `form`); `signature` replaces the sha256 one, null sends neither.
   */
  async deliver(url: string, event: string, payload: object, options: { secret?: string; deliveryId?: string; signature?: string | null; form?: boolean; rawBody?: string } = {}): Promise<{ status: number; body: any }> {
    const json = JSON.stringify(payload);
    const body = options.rawBody ?? (options.form ? `payload=${encodeURIComponent(json)}` : json);
    const repositoryId = (payload as Json).repository?.id;
    const headers: Record<string, string> = {
      'Content-Type': options.form ? 'application/x-www-form-urlencoded' : 'application/json',
      'User-Agent': 'GitHub-Hookshot/8c7f2e1', Accept: '*/*',
      'X-GitHub-Event': event, 'X-GitHub-Delivery': options.deliveryId ?? randomUUID(), 'X-GitHub-Hook-ID': String(this.hookId),
      ...(repositoryId !== undefined ? { 'X-GitHub-Hook-Installation-Target-ID': String(repositoryId), 'X-GitHub-Hook-Installation-Target-Type': 'repository' } : {}),
      ...(this.enterprise ? { 'X-GitHub-Enterprise-Version': enterpriseVersion, 'X-GitHub-Enterprise-Host': new URL(this.webUrl).host } : {}),
    };
    if (options.signature !== null) {
      const sha256 = options.signature ?? (options.secret ? `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}` : undefined);
      if (sha256 !== undefined) headers['X-Hub-Signature-256'] = sha256;
      if (options.secret) headers['X-Hub-Signature'] = `sha1=${createHmac('sha1', options.secret).update(body).digest('hex')}`;
    }
    const response = await fetch(url, { method: 'POST', headers, body });
    const text = await response.text();
    let parsed: unknown = text || undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the text as it is
    }
    return { status: response.status, body: parsed };
  }

  // ─── HTTP ───

  private async handle(method: string, target: string, headers: IncomingHttpHeaders, text: string): Promise<FakeGitHubAnswer> {
    const parsed = new URL(target, 'http://fake');
    const prefix = this.enterprise ? '/api/v3' : '';
    const inApi = parsed.pathname === prefix || parsed.pathname.startsWith(`${prefix}/`);
    const path = inApi ? parsed.pathname.slice(prefix.length) || '/' : parsed.pathname;
    const call: FakeGitHubCall = { method, path: parsed.pathname, url: target, query: Object.fromEntries(parsed.searchParams), headers, body: text, status: 0 };
    this.calls.push(call);
    const own = await this.answer(call, path, parsed.searchParams, inApi);
    const answer = this.misbehave ? this.misbehave(call, own) : own;
    call.status = answer.status;
    for (const held of this.holds.filter((entry) => entry.when(call))) await held.release;
    return answer;
  }

  /** `path`: below the API root. */
  private async answer(call: FakeGitHubCall, path: string, query: URLSearchParams, inApi: boolean): Promise<FakeGitHubAnswer> {
    const scriptedIndex = this.scripted.findIndex((entry) => entry.when(call));
    if (scriptedIndex >= 0) {
      const { answer } = this.scripted.splice(scriptedIndex, 1)[0]!;
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      return this.withDefaults(answer, call);
    }
    if (!call.headers['user-agent']) {
      // GitHub's front end, before the API: text/html, no JSON.
      return { status: 403, body: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.\n', headers: { 'content-type': 'text/html; charset=utf-8' } };
    }
    if (!inApi) return this.withDefaults(error(404, 'Not Found'), call);
    const authorization = String(call.headers.authorization ?? '');
    if (!authorization) return this.withDefaults(error(401, 'Requires authentication'), call);
    const [scheme, credential] = authorization.split(/\s+/, 2);
    if (!/^(bearer|token)$/i.test(scheme ?? '') || credential !== this.token) return this.withDefaults(error(401, 'Bad credentials'), call);
    const now = Math.floor(Date.now() / 1000);
    if (now >= this.rateLimit.reset) this.rateLimit = { ...this.rateLimit, remaining: this.rateLimit.limit, reset: now + 3600 };
    if (path === '/rate_limit' && call.method === 'GET') return this.signedIn(this.rateLimitJson(), call);
    if (this.rateLimit.remaining <= 0) return this.signedIn(githubErrors.rateLimited(this.rateLimit.reset, this.user.id), call);
    let body: unknown;
    if (call.body.trim() !== '') {
      try {
        body = JSON.parse(call.body);
      } catch {
        this.rateLimit.remaining--;
        return this.signedIn(error(400, 'Problems parsing JSON'), call);
      }
    }
    const answer = this.route(call.method, path, query, body);
    if (call.method === 'GET' && answer.status === 200) {
      const etag = `W/"${createHash('sha256').update(`${answer.headers?.link ?? ''}\n${JSON.stringify(answer.body)}`).digest('hex')}"`;
      answer.headers = { ...answer.headers, etag, 'cache-control': 'private, max-age=60, s-maxage=60', vary: 'Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding' };
      if (matchesETag(call.headers['if-none-match'], etag)) return this.signedIn({ status: 304, headers: { etag, 'cache-control': answer.headers['cache-control']! } }, call);
    }
    this.rateLimit.remaining = Math.max(0, this.rateLimit.remaining - 1);
    return this.signedIn(answer, call);
  }

  /** An answer to a signed-in request: the token's scopes beside the usual headers. */
  private signedIn(answer: FakeGitHubAnswer, call: FakeGitHubCall): FakeGitHubAnswer {
    const withScopes = this.scopes === null ? answer : { ...answer, headers: { 'x-oauth-scopes': this.scopes, 'x-accepted-oauth-scopes': call.path.includes('/repos/') ? 'repo' : '', ...answer.headers } };
    return this.withDefaults(withScopes, call);
  }

  /** GitHub's headers on every API answer (the answer's own win). */
  private withDefaults(answer: FakeGitHubAnswer, call?: FakeGitHubCall): FakeGitHubAnswer {
    const { limit, remaining, reset } = this.rateLimit;
    const version = String(call?.headers['x-github-api-version'] ?? '2022-11-28');
    return {
      ...answer,
      headers: {
        ...(answer.body !== undefined && typeof answer.body !== 'string' ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        'x-github-media-type': 'github.v3; format=json', 'x-github-api-version-selected': version, 'x-github-request-id': requestId(),
        'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-used': String(limit - remaining),
        'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': 'core',
        ...(this.enterprise ? { 'x-github-enterprise-version': enterpriseVersion } : {}),
        ...answer.headers,
      },
    };
  }

  private route(method: string, path: string, query: URLSearchParams, body: unknown): FakeGitHubAnswer {
    const segments = path.split('/').slice(1).map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
    if (path === '/user' && method === 'GET') return { status: 200, body: this.viewerJson() };
    let repo: ReturnType<FakeGitHub['findRepo']>;
    let rest: string[];
    if (segments[0] === 'repos' && segments.length >= 3) {
      repo = this.findRepo(`${segments[1]}/${segments[2]}`);
      rest = segments.slice(3);
    } else if (segments[0] === 'repositories' && segments.length >= 2 && /^\d+$/.test(segments[1]!)) {
      repo = [...this.repos.values()].find((candidate) => candidate.id === Number(segments[1]));
      rest = segments.slice(2);
    } else {
      return error(404, 'Not Found');
    }
    if (!repo || !repo.readable) return error(404, 'Not Found', `${docs}/repos/repos#get-a-repository`);
    const linkBase = this.repositoryIdLinks ? `/repositories/${repo.id}` : `/repos/${repo.fullName}`;
    const [first, second, third, fourth, ...more] = rest;
    if (first === undefined) return method === 'GET' ? { status: 200, body: this.repoJson(repo, true) } : error(404, 'Not Found');
    if ((first === 'pulls' && (method !== 'GET' || second === undefined)) || first === 'branches') return this.pullRoute(method, repo, rest, query, body);
    if (first === 'pulls' && method === 'GET') {
      const answer = this.reviewRoute(repo.fullName, rest.slice(1), query, linkBase);
      if (answer) return answer;
    }
    if (first === 'collaborators' && second !== undefined && third === 'permission' && fourth === undefined && method === 'GET') return this.permissionRoute(repo, second);
    if (first !== 'issues' || more.length > 0) return error(404, 'Not Found');
    if (second === undefined) return method === 'GET' ? this.listIssues(repo.fullName, query, `${linkBase}/issues`) : error(404, 'Not Found');
    if (second === 'comments' && third === undefined) {
      if (method !== 'GET') return error(404, 'Not Found');
      const comments = this.commentList.filter((comment) => comment.repo === repo!.fullName);
      return this.listComments(comments, (comment) => this.commentJson(comment, this.issue(comment.repo, comment.issueNumber)!), query, `${linkBase}/issues/comments`, 'IssueComment');
    }
    if (second === 'comments' && third !== undefined && /^\d+$/.test(third) && fourth === undefined) return this.commentRoute(method, repo.fullName, Number(third), body);
    if (!/^\d+$/.test(second)) return error(404, 'Not Found');
    const issue = this.issue(repo.fullName, Number(second));
    if (!issue) return error(404, 'Not Found', `${docs}/issues/issues#get-an-issue`);
    if (third === undefined) {
      if (method === 'GET') return { status: 200, body: this.issueJson(issue) };
      if (method === 'PATCH') return this.patchIssue(issue, body);
      return error(404, 'Not Found');
    }
    if (third === 'comments' && fourth === undefined) {
      if (method === 'GET') {
        const since = query.get('since');
        if (since !== null && Number.isNaN(Date.parse(since))) return validationFailed('IssueComment', 'since', 'invalid');
        const comments = this.comments(issue.repo, issue.number).filter((comment) => since === null || Date.parse(comment.updated_at) >= Date.parse(since));
        return this.paginate(comments.map((comment) => this.commentJson(comment, issue)), query, `${linkBase}/issues/${issue.number}/comments`);
      }
      if (method === 'POST') return this.postComment(issue, body);
      return error(404, 'Not Found');
    }
    if (third === 'labels') return this.labelRoute(method, issue, fourth, body);
    return error(404, 'Not Found');
  }

  private listIssues(fullName: string, query: URLSearchParams, linkPath: string): FakeGitHubAnswer {
    const state = query.get('state') ?? 'open';
    if (!['open', 'closed', 'all'].includes(state)) return validationFailed('Issue', 'state', 'invalid');
    const sinceText = query.get('since');
    const since = sinceText === null ? undefined : Date.parse(sinceText);
    if (since !== undefined && Number.isNaN(since)) return validationFailed('Issue', 'since', 'invalid');
    const labels = (query.get('labels') ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
    const assignee = query.get('assignee');
    const creator = query.get('creator');
    const sort = query.get('sort') ?? 'created';
    const direction = query.get('direction') ?? 'desc';
    const key = (issue: FakeGitHubIssue) => (sort === 'updated' ? Date.parse(issue.updated_at) : sort === 'comments' ? issue.comments : Date.parse(issue.created_at));
    const found = this.issues
      .filter((issue) => issue.repo === fullName && (state === 'all' || issue.state === state))
      .filter((issue) => labels.every((name) => issue.labels.some((label) => label.toLowerCase() === name)))
      .filter((issue) => assignee === null || (assignee === 'none' ? issue.assignees.length === 0 : assignee === '*' ? issue.assignees.length > 0 : issue.assignees.some((login) => login.toLowerCase() === assignee.toLowerCase())))
      .filter((issue) => creator === null || issue.user.login.toLowerCase() === creator.toLowerCase())
      .filter((issue) => since === undefined || Date.parse(issue.updated_at) >= since)
      .sort((a, b) => (key(a) - key(b) || a.id - b.id) * (direction === 'asc' ? 1 : -1));
    return this.paginate(found.map((issue) => this.issueJson(issue)), query, linkPath);
  }

  /** One page of `items` with GitHub's Link header (prev, next, last, first), absolute on the fake's base. */
  private paginate(items: unknown[], query: URLSearchParams, linkPath: string): FakeGitHubAnswer {
    const requested = Number.parseInt(query.get('per_page') ?? '', 10);
    const perPage = Number.isNaN(requested) || requested < 1 ? 30 : Math.min(requested, 100);
    const pageAsked = Number.parseInt(query.get('page') ?? '', 10);
    const page = Number.isNaN(pageAsked) || pageAsked < 1 ? 1 : pageAsked;
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (to: number, rel: string) => {
      const params = new URLSearchParams(query);
      params.set('page', String(to));
      return `<${this.url}${linkPath}?${params}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page > 1) links.push(link(page - 1, 'prev'));
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'));
    return { status: 200, body: items.slice((page - 1) * perPage, page * perPage), headers: links.length > 0 ? { link: links.join(', ') } : {} };
  }

  /** GET below /repos/{o}/{r}/pulls; undefined for paths it does not know (404 then). */
  private reviewRoute(fullName: string, path: string[], query: URLSearchParams, linkBase: string): FakeGitHubAnswer | undefined {
    const [first, second, third, fourth, ...more] = path;
    if (more.length > 0) return undefined;
    if (first === 'comments' && second === undefined) {
      return this.listReviewComments(this.reviewCommentList.filter((comment) => comment.repo === fullName), query, `${linkBase}/pulls/comments`);
    }
    if (first === undefined || !/^\d+$/.test(first)) return undefined;
    const pull = this.issue(fullName, Number(first));
    if (!pull?.pullRequest) return error(404, 'Not Found', `${docs}/pulls/pulls#get-a-pull-request`);
    const base = `${linkBase}/pulls/${pull.number}`;
    if (second === undefined) return { status: 200, body: this.pullJson(pull) };
    if (second === 'comments' && third === undefined) return this.listReviewComments(this.reviewCommentList.filter((comment) => comment.repo === fullName && comment.number === pull.number), query, `${base}/comments`);
    if (second !== 'reviews') return undefined;
    const reviews = this.reviewList.filter((review) => review.repo === fullName && review.number === pull.number);
    if (third === undefined) return this.paginate(reviews.map((review) => this.reviewJson(review)), query, `${base}/reviews`);
    const review = reviews.find((candidate) => String(candidate.id) === third);
    if (!review) return error(404, 'Not Found', `${docs}/pulls/reviews#get-a-review-for-a-pull-request`);
    if (fourth === undefined) return { status: 200, body: this.reviewJson(review) };
    if (fourth !== 'comments') return undefined;
    const comments = this.reviewCommentList.filter((comment) => comment.reviewId === review.id);
    return this.paginate(comments.map((comment) => this.reviewCommentJson(comment)), query, `${base}/reviews/${review.id}/comments`);
  }

  private listReviewComments(comments: FakeGitHubReviewComment[], query: URLSearchParams, linkPath: string): FakeGitHubAnswer {
    return this.listComments(comments, (comment) => this.reviewCommentJson(comment), query, linkPath, 'PullRequestReviewComment');
  }

  /** Comments (review or issue comments) with `since` (updated at or after), `sort` (created|updated; without it by id) and `direction` (default desc with a sort). */
  private listComments<C extends { id: number; created_at: string; updated_at: string }>(comments: C[], json: (comment: C) => Json, query: URLSearchParams, linkPath: string, resource: string): FakeGitHubAnswer {
    const sinceText = query.get('since');
    const since = sinceText === null ? undefined : Date.parse(sinceText);
    if (since !== undefined && Number.isNaN(since)) return validationFailed(resource, 'since', 'invalid');
    const sort = query.get('sort');
    const direction = sort === null ? 'asc' : query.get('direction') ?? 'desc';
    const key = (comment: C) => (sort === 'updated' ? Date.parse(comment.updated_at) : sort === 'created' ? Date.parse(comment.created_at) : 0);
    const found = comments
      .filter((comment) => since === undefined || Date.parse(comment.updated_at) >= since)
      .sort((a, b) => (key(a) - key(b) || a.id - b.id) * (direction === 'asc' ? 1 : -1));
    return this.paginate(found.map(json), query, linkPath);
  }

  private permissionRoute(repo: FakeGitHubRepo, login: string): FakeGitHubAnswer {
    const lower = login.toLowerCase();
    const role = lower === repo.owner.toLowerCase() || lower === this.user.login.toLowerCase() ? 'admin' : this.roles.get(repo.fullName.toLowerCase())?.get(lower);
    if (!role) return error(404, `${login} is not a user`, `${docs}/collaborators/collaborators#get-repository-permissions-for-a-user`);
    const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
    return { status: 200, body: { permission, role_name: role, user: { ...this.userJson(login), permissions: { admin: role === 'admin', maintain: role === 'admin' || role === 'maintain', push: permission !== 'read', triage: true, pull: true }, role_name: role } } };
  }

  private commentRoute(method: string, fullName: string, id: number, body: unknown): FakeGitHubAnswer {
    const comment = this.commentList.find((candidate) => candidate.id === id && candidate.repo === fullName);
    if (!comment) return error(404, 'Not Found', `${docs}/issues/comments#update-an-issue-comment`);
    const issue = this.issue(fullName, comment.issueNumber)!;
    if (method === 'GET') return { status: 200, body: this.commentJson(comment, issue) };
    if (method === 'DELETE') {
      this.commentList.splice(this.commentList.indexOf(comment), 1);
      issue.comments--;
      return { status: 204 };
    }
    if (method !== 'PATCH') return error(404, 'Not Found');
    const text = (body as Json | undefined)?.body;
    const invalid = checkCommentBody(text);
    if (invalid) return invalid;
    comment.body = text;
    comment.updated_at = this.tick();
    return { status: 200, body: this.commentJson(comment, issue) };
  }

  private postComment(issue: FakeGitHubIssue, body: unknown): FakeGitHubAnswer {
    const text = (body as Json | undefined)?.body;
    const invalid = checkCommentBody(text);
    if (invalid) return invalid;
    const comment = this.addComment(issue.repo, issue.number, text, { author: this.user.login });
    const json = this.commentJson(comment, issue);
    return { status: 201, body: json, headers: { location: json.url } };
  }

  private labelRoute(method: string, issue: FakeGitHubIssue, name: string | undefined, body: unknown): FakeGitHubAnswer {
    const repo = this.knownRepo(issue.repo);
    const current = () => ({ status: 200, body: issue.labels.map((label) => this.labelJson(repo, label)) });
    if (name !== undefined) {
      if (method !== 'DELETE') return error(404, 'Not Found');
      const index = issue.labels.findIndex((label) => label.toLowerCase() === name.toLowerCase());
      if (index < 0) return error(404, 'Label does not exist', `${docs}/issues/labels#remove-a-label-from-an-issue`);
      issue.labels.splice(index, 1);
      issue.updated_at = this.tick();
      return current();
    }
    if (method === 'GET') return current();
    if (method === 'DELETE') {
      issue.labels = [];
      issue.updated_at = this.tick();
      return { status: 204 };
    }
    if (method !== 'POST' && method !== 'PUT') return error(404, 'Not Found');
    const given = Array.isArray(body) ? body : (body as Json | undefined)?.labels;
    const names = Array.isArray(given) ? given.map((entry: unknown) => (typeof entry === 'string' ? entry : (entry as Json | null)?.name)) : undefined;
    if (!names || names.some((entry) => typeof entry !== 'string' || entry.trim() === '')) {
      return error(422, 'Invalid request.\n\n"labels" wasn\'t supplied.', `${docs}/issues/labels#add-labels-to-an-issue`);
    }
    const next = this.labelNames(issue.repo, method === 'PUT' ? names : [...issue.labels, ...names]);
    if (next.join('\n') !== issue.labels.join('\n')) {
      issue.labels = next;
      issue.updated_at = this.tick();
    }
    return current();
  }

  private patchIssue(issue: FakeGitHubIssue, body: unknown): FakeGitHubAnswer {
    const input = (body ?? {}) as Json;
    if (input.state !== undefined && input.state !== 'open' && input.state !== 'closed') return validationFailed('Issue', 'state', 'invalid');
    this.update(issue, {
      ...(typeof input.title === 'string' ? { title: input.title } : {}), ...(typeof input.body === 'string' ? { body: input.body } : {}),
      ...(Array.isArray(input.labels) ? { labels: input.labels.map((entry: unknown) => (typeof entry === 'string' ? entry : (entry as Json).name)) } : {}),
      ...(Array.isArray(input.assignees) ? { assignees: input.assignees } : {}), ...(input.state ? { state: input.state } : {}),
    });
    if (input.state === 'closed' && (input.state_reason === 'not_planned' || input.state_reason === 'completed')) issue.state_reason = input.state_reason;
    return { status: 200, body: this.issueJson(issue) };
  }

  // ─── JSON shapes ───

  private viewerJson(): Json {
    return {
      ...this.userJson(this.user.login), name: this.user.name, company: null, blog: '', location: null, email: `${this.user.login}@example.com`,
      hireable: null, bio: null, twitter_username: null, public_repos: this.repos.size, public_gists: 0, followers: 0, following: 0,
      created_at: '2020-01-01T00:00:00Z', updated_at: stamp(this.clock),
    };
  }

  private rateLimitJson(): FakeGitHubAnswer {
    const { limit, remaining, reset } = this.rateLimit;
    const core = { limit, used: limit - remaining, remaining, reset };
    return { status: 200, body: { resources: { core, search: { limit: 30, used: 0, remaining: 30, reset }, graphql: { limit: 5000, used: 0, remaining: 5000, reset } }, rate: core } };
  }

  private userJson(login: string): Json {
    let id = this.userIds.get(login.toLowerCase());
    if (id === undefined) {
      id = this.nextId.user++;
      this.userIds.set(login.toLowerCase(), id);
    }
    return {
      login, id, node_id: nodeId('U_kgDO', id), avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`, gravatar_id: '',
      url: `${this.url}/users/${login}`, html_url: `${this.webUrl}/${login}`, type: 'User', site_admin: false,
    };
  }

  private repoJson(repo: FakeGitHubRepo, withPermissions: boolean): Json {
    const api = `${this.url}/repos/${repo.fullName}`;
    const open = this.issues.filter((issue) => issue.repo === repo.fullName && issue.state === 'open').length;
    const owner = this.userJson(repo.owner);
    if (repo.owner !== this.user.login) owner.type = 'Organization';
    return {
      id: repo.id, node_id: nodeId('R_kgDO', repo.id), name: repo.name, full_name: repo.fullName, private: repo.private, owner,
      html_url: `${this.webUrl}/${repo.fullName}`, description: null, fork: false, url: api,
      issues_url: `${api}/issues{/number}`, labels_url: `${api}/labels{/name}`, issue_comment_url: `${api}/issues/comments{/number}`,
      created_at: repo.createdAt, updated_at: repo.createdAt, pushed_at: repo.createdAt,
      clone_url: `${this.webUrl}/${repo.fullName}.git`, has_issues: true, archived: false, disabled: false,
      visibility: repo.private ? 'private' : 'public', open_issues_count: open, open_issues: open, default_branch: this.defaultBranch(repo.fullName),
      ...(withPermissions ? { permissions: { admin: false, maintain: false, push: !this.readOnly.has(repo.fullName.toLowerCase()), triage: true, pull: true } } : {}),
    };
  }

  private labelJson(repo: FakeGitHubRepo & { labels: Map<string, { id: number; name: string; color: string }> }, name: string): Json {
    const label = this.repoLabel(repo, name);
    return { id: label.id, node_id: nodeId('LA_kwDO', label.id), url: `${this.url}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`, name: label.name, color: label.color, default: false, description: null };
  }

  private issueJson(issue: FakeGitHubIssue): Json {
    const repo = this.knownRepo(issue.repo);
    const api = issue.url;
    const web = issue.html_url;
    const assignees = issue.assignees.map((login) => this.userJson(login));
    return {
      url: api, repository_url: `${this.url}/repos/${repo.fullName}`, labels_url: `${api}/labels{/name}`, comments_url: `${api}/comments`,
      events_url: `${api}/events`, html_url: web, id: issue.id, node_id: issue.node_id, number: issue.number,
      title: issue.title, user: this.userJson(issue.user.login), labels: issue.labels.map((name) => this.labelJson(repo, name)), state: issue.state,
      locked: false, assignee: assignees[0] ?? null, assignees, milestone: null, comments: issue.comments,
      created_at: issue.created_at, updated_at: issue.updated_at, closed_at: issue.closed_at, author_association: issue.user.login === repo.owner ? 'OWNER' : 'CONTRIBUTOR',
      active_lock_reason: null,
      ...(issue.pullRequest ? { draft: false, pull_request: { url: `${this.url}/repos/${repo.fullName}/pulls/${issue.number}`, html_url: web, diff_url: `${web}.diff`, patch_url: `${web}.patch`, merged_at: issue.merged ? issue.closed_at : null } } : {}),
      body: issue.body, timeline_url: `${api}/timeline`, state_reason: issue.state_reason,
    };
  }

  /** The `pull_request` object of a pull_request webhook (the PR has its own id beside its issue's). */
  private pullJson(issue: FakeGitHubIssue): Json {
    const repo = this.knownRepo(issue.repo);
    const asIssue = this.issueJson(issue);
    const api = `${this.url}/repos/${repo.fullName}/pulls/${issue.number}`;
    const branch = (ref: string, sha: string) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: this.userJson(repo.owner), repo: this.repoJson(repo, false) });
    return {
      url: api, id: this.nextId.pull + issue.id % 1_000_000, node_id: asIssue.node_id, html_url: asIssue.html_url, diff_url: `${asIssue.html_url}.diff`,
      patch_url: `${asIssue.html_url}.patch`, issue_url: asIssue.url, number: issue.number, state: issue.state, locked: false, title: issue.title,
      user: asIssue.user, body: issue.body, created_at: issue.created_at, updated_at: issue.updated_at, closed_at: issue.closed_at, merged_at: issue.merged ? issue.closed_at : null,
      merge_commit_sha: null, assignee: asIssue.assignee, assignees: asIssue.assignees, requested_reviewers: [], requested_teams: [], labels: asIssue.labels,
      milestone: null, draft: this.drafts.has(issue), commits_url: `${api}/commits`, comments_url: asIssue.comments_url,
      head: branch(issue.head ?? `feature-${issue.number}`, sha(`${issue.id}head`)), base: branch(issue.base ?? 'main', sha(`${repo.id}base`)),
      author_association: asIssue.author_association, merged: issue.merged ?? false, mergeable: null, comments: issue.comments, review_comments: 0, commits: 1, additions: 1, deletions: 0, changed_files: 1,
    };
  }

  /** A review as REST gives it: `state` in upper case, an empty body as "". */
  private reviewJson(review: FakeGitHubReview): Json {
    const pull = this.issue(review.repo, review.number)!;
    const html = `${pull.html_url}#pullrequestreview-${review.id}`;
    const api = `${this.url}/repos/${review.repo}/pulls/${review.number}`;
    return {
      id: review.id, node_id: nodeId('PRR_kwDO', review.id), user: this.userJson(review.user.login), body: review.body ?? '', state: review.state,
      html_url: html, pull_request_url: api, author_association: this.association(review.repo, review.user.login),
      _links: { html: { href: html }, pull_request: { href: api } }, submitted_at: review.submitted_at, commit_id: review.commit_id,
    };
  }

  private reviewCommentJson(comment: FakeGitHubReviewComment): Json {
    const pull = this.issue(comment.repo, comment.number)!;
    const url = `${this.url}/repos/${comment.repo}/pulls/comments/${comment.id}`;
    const html = `${pull.html_url}#discussion_r${comment.id}`;
    const pullUrl = `${this.url}/repos/${comment.repo}/pulls/${comment.number}`;
    const commit = sha(`${pull.id}head`);
    return {
      url, pull_request_review_id: comment.reviewId, id: comment.id, node_id: nodeId('PRRC_kwDO', comment.id), diff_hunk: '@@ -1 +1 @@\n-# Hello-World', path: comment.path,
      position: 1, original_position: 1, commit_id: commit, original_commit_id: commit, user: this.userJson(comment.user.login), body: comment.body,
      created_at: comment.created_at, updated_at: comment.updated_at, html_url: html, pull_request_url: pullUrl, author_association: this.association(comment.repo, comment.user.login),
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pullUrl } },
      start_line: null, original_start_line: null, start_side: null, line: comment.line, original_line: comment.line, side: 'RIGHT', subject_type: 'line',
    };
  }

  private association(fullName: string, login: string): string {
    const repo = this.knownRepo(fullName);
    return login === repo.owner ? 'OWNER' : this.roles.get(repo.fullName.toLowerCase())?.has(login.toLowerCase()) ? 'COLLABORATOR' : 'CONTRIBUTOR';
  }

  private commentJson(comment: FakeGitHubComment, issue: FakeGitHubIssue): Json {
    const repo = this.knownRepo(issue.repo);
    return {
      url: `${this.url}/repos/${repo.fullName}/issues/comments/${comment.id}`, html_url: `${issue.html_url}#issuecomment-${comment.id}`,
      issue_url: `${this.url}/repos/${repo.fullName}/issues/${issue.number}`, id: comment.id, node_id: nodeId('IC_kwDO', comment.id),
      user: this.userJson(comment.user.login), created_at: comment.created_at, updated_at: comment.updated_at,
      author_association: comment.user.login === repo.owner ? 'OWNER' : 'CONTRIBUTOR', body: comment.body, performed_via_github_app: null,
    };
  }

  // ─── Pull requests ───

  /** Repositories whose branches and commits are a real bare git repository's (full name → its folder). */
  private readonly hosted = new Map<string, string>();
  /** Pull requests opened as drafts. */
  private readonly drafts = new WeakSet<FakeGitHubIssue>();
  /** Repositories where the token's user may not push (`permissions.push: false`). */
  readonly readOnly = new Set<string>();

  /** Serves the repository's branches, commits and default branch from the bare git repository at `folder`. */
  hostGit(fullName: string, folder: string): void {
    this.addRepo(fullName);
    this.hosted.set(fullName.toLowerCase(), folder);
  }

  /** The pull requests of a repository (issues with `pullRequest`), oldest first. */
  pulls(fullName: string): FakeGitHubIssue[] {
    return this.issues.filter((issue) => issue.pullRequest && issue.repo.toLowerCase() === fullName.toLowerCase());
  }

  isDraft(pull: FakeGitHubIssue): boolean {
    return this.drafts.has(pull);
  }

  /** The commit a branch of a hosted repository points at; undefined when it has no such branch. */
  private branchSha(fullName: string, branch: string): string | undefined {
    const folder = this.hosted.get(fullName.toLowerCase());
    if (!folder) return branch === 'main' ? sha(`${fullName}main`) : undefined;
    try {
      return execFileSync('git', ['-C', folder, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  private defaultBranch(fullName: string): string {
    const folder = this.hosted.get(fullName.toLowerCase());
    if (!folder) return 'main';
    return execFileSync('git', ['-C', folder, 'symbolic-ref', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  }

  /** POST|GET …/pulls, PATCH …/pulls/{n}, GET …/branches/{branch}. */
  private pullRoute(method: string, repo: FakeGitHubRepo, rest: string[], query: URLSearchParams, body: unknown): FakeGitHubAnswer {
    const [first, second, ...more] = rest;
    if (first === 'branches') {
      const name = [second, ...more].join('/');
      const head = method === 'GET' && name ? this.branchSha(repo.fullName, name) : undefined;
      if (!head) return error(404, 'Branch not found', `${docs}/branches/branches#get-a-branch`);
      return { status: 200, body: { name, commit: { sha: head, url: `${this.url}/repos/${repo.fullName}/commits/${head}` }, protected: false } };
    }
    if (second === undefined && method === 'GET') {
      const state = query.get('state') ?? 'open';
      const head = query.get('head');
      const base = query.get('base');
      const found = this.pulls(repo.fullName)
        .filter((pull) => state === 'all' || pull.state === state)
        // Without the owner, GitHub ignores `head` (a known trap): the fake does the same.
        .filter((pull) => head === null || !head.includes(':') || `${repo.owner}:${pull.head}`.toLowerCase() === head.toLowerCase())
        .filter((pull) => base === null || pull.base === base)
        .reverse();
      return this.paginate(found.map((pull) => this.pullJson(pull)), query, `/repos/${repo.fullName}/pulls`);
    }
    if (second === undefined && method === 'POST') return this.createPull(repo, body as Json | undefined);
    if (second !== undefined && /^\d+$/.test(second) && more.length === 0 && method === 'PATCH') {
      const pull = this.pulls(repo.fullName).find((candidate) => candidate.number === Number(second));
      if (!pull) return error(404, 'Not Found', `${docs}/pulls/pulls#update-a-pull-request`);
      const change = (body ?? {}) as Json;
      if (typeof change.title === 'string') pull.title = change.title;
      if (typeof change.body === 'string') pull.body = change.body;
      if (change.state === 'open' || change.state === 'closed') {
        pull.state = change.state;
        pull.closed_at = change.state === 'closed' ? this.tick() : null;
      }
      if (typeof change.base === 'string') {
        if (!this.branchSha(repo.fullName, change.base)) return validationFailed('PullRequest', 'base', 'invalid');
        pull.base = change.base;
      }
      pull.updated_at = this.tick();
      return { status: 200, body: this.pullJson(pull) };
    }
    return error(404, 'Not Found');
  }

  private createPull(repo: FakeGitHubRepo, body: Json | undefined): FakeGitHubAnswer {
    const title = body?.title;
    const headText = typeof body?.head === 'string' ? body.head : '';
    const base = typeof body?.base === 'string' ? body.base : '';
    if (typeof title !== 'string' || title === '') return validationFailed('PullRequest', 'title', 'missing_field');
    const head = headText.includes(':') ? headText.slice(headText.indexOf(':') + 1) : headText;
    const headSha = head ? this.branchSha(repo.fullName, head) : undefined;
    if (!headSha) return validationFailed('PullRequest', 'head', 'invalid');
    if (!base || !this.branchSha(repo.fullName, base)) return validationFailed('PullRequest', 'base', 'invalid');
    if (this.pulls(repo.fullName).some((pull) => pull.state === 'open' && pull.head === head && pull.base === base)) {
      return custom422(`A pull request already exists for ${repo.owner}:${head}.`);
    }
    const folder = this.hosted.get(repo.fullName.toLowerCase());
    const ahead = folder ? Number(execFileSync('git', ['-C', folder, 'rev-list', '--count', `refs/heads/${base}..refs/heads/${head}`], { encoding: 'utf8' }).trim()) : 1;
    if (ahead === 0) return custom422(`No commits between ${base} and ${head}`);
    const pull = this.addIssue(repo.fullName, { title, body: typeof body?.body === 'string' ? body.body : null, pullRequest: true, head, base, author: this.user.login });
    if (body?.draft === true) this.drafts.add(pull);
    const json = this.pullJson(pull);
    return { status: 201, body: json, headers: { location: json.url } };
  }

  // ─── Helpers ───

  private findRepo(fullName: string) {
    return this.repos.get(fullName.toLowerCase());
  }

  private knownRepo(fullName: string) {
    const repo = this.findRepo(fullName);
    if (!repo) throw new Error(`no repository ${fullName} in the fake GitHub`);
    return repo;
  }

  /** The repository's label of that name (case-insensitive), created on first use as GitHub does when labelling. */
  private repoLabel(repo: FakeGitHubRepo & { labels: Map<string, { id: number; name: string; color: string }> }, name: string) {
    let label = repo.labels.get(name.toLowerCase());
    if (!label) {
      label = { id: this.nextId.label++, name, color: labelColors[repo.labels.size % labelColors.length]! };
      repo.labels.set(name.toLowerCase(), label);
    }
    return label;
  }

  /** Names as the repository spells them, without duplicates. */
  private labelNames(fullName: string, names: string[]): string[] {
    const repo = this.knownRepo(fullName);
    const result: string[] = [];
    for (const name of names) {
      const label = this.repoLabel(repo, name);
      if (!result.includes(label.name)) result.push(label.name);
    }
    return result;
  }

  /** Strictly increasing times, three minutes apart, in GitHub's format (no milliseconds). */
  private tick(): string {
    this.clock += 180_000;
    return stamp(this.clock);
  }
}

function stamp(time: number): string {
  return new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function nodeId(prefix: string, id: number): string {
  return prefix + Buffer.from(`0:${id}`).toString('base64url');
}

function sha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

function matchesETag(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return String(header).split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/** GitHub's 422 with a `custom` error and its message (PROVIDERS §6). */
function custom422(message: string): FakeGitHubAnswer {
  return error(422, 'Validation Failed', `${docs}/pulls/pulls#create-a-pull-request`, { errors: [{ resource: 'PullRequest', code: 'custom', message }] });
}

function validationFailed(resource: string, field: string, code: string): FakeGitHubAnswer {
  return error(422, 'Validation Failed', docs, { errors: [{ resource, field, code }] });
}

function checkCommentBody(text: unknown): FakeGitHubAnswer | undefined {
  if (typeof text !== 'string' || text === '') return error(422, 'Validation Failed', `${docs}/issues/comments#create-an-issue-comment`, { errors: [{ resource: 'IssueComment', code: 'missing_field', field: 'body' }] });
  if (text.length > 65536) return error(422, 'Validation Failed', `${docs}/issues/comments#create-an-issue-comment`, { errors: [{ resource: 'IssueComment', code: 'custom', field: 'body', message: 'body is too long (maximum is 65536 characters)' }] });
  return undefined;
}
