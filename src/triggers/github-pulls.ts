// GitHub pull requests over REST (PROVIDERS §6): find the open one for a head branch, create one,
// update its title and body, and what a repository says before anything is pushed (its default
// branch, whether the token may push, whether a branch exists). Requests, authentication, errors
// and GitHub Enterprise Server's API root are the GitHub provider's (`rest`, `apiRoot`).

import type { Connection, Run } from '../core/api';
import { quote } from '../core/errors';
import { repositoryPattern } from '../core/github-repository';
import { isRecord } from '../core/validate';
import type { CreateOutcome, GitHubPull, GitHubRepository, NewPull, PullRequestHost } from '../engine/pull-request-step';
import { apiRoot, rest } from './providers/github';
import { ProviderError, text } from './provider';


function pullOf(body: unknown): GitHubPull | undefined {
  if (!isRecord(body) || typeof body.number !== 'number' || !text(body.html_url)) return undefined;
  const state = body.merged === true || Boolean(text(body.merged_at)) ? 'merged' : body.state === 'closed' ? 'closed' : 'open';
  return { number: body.number, url: text(body.html_url)!, state };
}

function repositoryPath(repository: string): string {
  if (!repositoryPattern.test(repository)) throw new ProviderError(`${quote(repository)} is not a repository as owner/name`);
  return `/repos/${repository}`;
}

/** GitHub's words for a 422: each `errors[].message`, else `errors[].field` and `code`, else `message`. */
function refusal(body: unknown): string {
  if (!isRecord(body)) return 'GitHub refused the request';
  const errors = Array.isArray(body.errors) ? body.errors.filter(isRecord) : [];
  const said = errors.map((error) => text(error.message) ?? [text(error.field), text(error.code)].filter(Boolean).join(' ')).filter(Boolean);
  return said.length > 0 ? said.join('; ') : text(body.message) ?? 'GitHub refused the request';
}

/** The repository's default branch and push permission; undefined when the token cannot see it (404). */
export async function readRepository(connection: Connection, repository: string, signal?: AbortSignal): Promise<GitHubRepository | undefined> {
  const answer = await rest(connection, 'GET', repositoryPath(repository), signal ? { signal } : {});
  if (answer.status === 404) return undefined;
  const body = isRecord(answer.body) ? answer.body : {};
  const defaultBranch = text(body.default_branch);
  if (!defaultBranch) throw new ProviderError(`GitHub answered the repository ${repository} without its default branch`);
  const push = isRecord(body.permissions) ? body.permissions.push : undefined;
  return { defaultBranch, ...(typeof push === 'boolean' ? { canPush: push } : {}) };
}

/** Whether the repository has the branch (GET /repos/{o}/{r}/branches/{branch}; 404 is no). */
export async function hasBranch(connection: Connection, repository: string, branch: string, signal?: AbortSignal): Promise<boolean> {
  const answer = await rest(connection, 'GET', `${repositoryPath(repository)}/branches/${encodeURIComponent(branch)}`, signal ? { signal } : {});
  return answer.status !== 404;
}

/** The open pull request whose head is `branch` of the repository's owner (`head=owner:branch`), if any. */
export async function findOpenPull(connection: Connection, repository: string, branch: string, signal?: AbortSignal): Promise<GitHubPull | undefined> {
  const owner = repository.split('/')[0]!;
  const query = new URLSearchParams({ head: `${owner}:${branch}`, state: 'open', per_page: '10' });
  const answer = await rest(connection, 'GET', `${repositoryPath(repository)}/pulls?${query}`, signal ? { signal } : {});
  if (answer.status === 404) throw new ProviderError(`GitHub has no repository ${repository} that this token can read`);
  if (!Array.isArray(answer.body)) throw new ProviderError('GitHub answered the list of pull requests without a list');
  return answer.body.map(pullOf).find((pull) => pull !== undefined);
}

/** Opens a pull request; the answers GitHub gives with 422 come back as what they mean. */
export async function createPull(connection: Connection, repository: string, pull: NewPull, signal?: AbortSignal): Promise<CreateOutcome> {
  const answer = await rest(connection, 'POST', `${repositoryPath(repository)}/pulls`, {
    body: { title: pull.title, head: pull.head, base: pull.base, body: pull.body, draft: pull.draft ?? false, maintainer_can_modify: true },
    answered: [422], ...(signal ? { signal } : {}),
  });
  if (answer.status === 404) throw new ProviderError(`GitHub has no repository ${repository} where this token can open a pull request`);
  if (answer.status === 422) {
    const message = refusal(answer.body);
    if (/a pull request already exists/i.test(message)) return { kind: 'exists' };
    if (/no commits between/i.test(message)) return { kind: 'nothing', message };
    return { kind: 'refused', message };
  }
  const created = pullOf(answer.body);
  if (!created) throw new ProviderError(`GitHub answered the new pull request without its number and address (HTTP ${answer.status})`);
  return { kind: 'created', pull: created };
}

/** Sets the title and body of pull request `number`. */
export async function updatePull(connection: Connection, repository: string, number: number, change: { title: string; body: string }, signal?: AbortSignal): Promise<GitHubPull> {
  const answer = await rest(connection, 'PATCH', `${repositoryPath(repository)}/pulls/${number}`, { body: change, answered: [422], ...(signal ? { signal } : {}) });
  if (answer.status === 404) throw new ProviderError(`GitHub has no pull request #${number} in ${repository} that this token can change`);
  if (answer.status === 422) throw new ProviderError(`GitHub refused to update pull request #${number}: ${refusal(answer.body)}`);
  const updated = pullOf(answer.body);
  if (!updated) throw new ProviderError(`GitHub answered the update of pull request #${number} without its number and address`);
  return updated;
}

/**
 * The web host of a connection's pages: Enterprise Server's own host (an API root ending in
 * /api/v3); api.github.com and GHE.com's api.<name>.ghe.com without `api.`; github.com for an API
 * root at any other host (a proxy in front of api.github.com).
 */
function webHost(connection: Connection): string {
  const root = new URL(apiRoot(connection));
  if (/\/api\/v3$/.test(root.pathname)) return root.host;
  return root.host.startsWith('api.') ? root.host.slice('api.'.length) : 'github.com';
}

/**
 * `url` when it is an https address on the connection's web host (a link Factory may show), else
 * undefined: an address GitHub's answer carries is still checked before it becomes a link.
 */
export function pullRequestLink(url: string, connection: Connection): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && parsed.host === webHost(connection) && !parsed.username && !parsed.password ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** A pull request a run's step opened, as words about the run show it: `link` only when the address passed `pullRequestLink`. */
export interface RunPullRequest {
  number: number;
  repository: string;
  link?: string;
}

/**
 * The pull requests `run`'s steps opened, in step order, each with its address as a link only when
 * it is https on the host of the step's GitHub account (`connection` finds the account by id).
 */
export function runPullRequests(run: Readonly<Run>, connection: (id: string | undefined) => Connection | undefined): RunPullRequest[] {
  return run.steps.flatMap((stepRun) => {
    if (!stepRun.pullRequest) return [];
    const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id);
    const account = step?.kind === 'pullRequest' ? connection(step.connectionId) : undefined;
    const link = account?.kind === 'github' ? pullRequestLink(stepRun.pullRequest.url, account) : undefined;
    return [{ number: stepRun.pullRequest.number, repository: stepRun.pullRequest.repository, ...(link ? { link } : {}) }];
  });
}

/** The pull request client the pullRequest step is given (app.ts). */
export const githubPulls: PullRequestHost = { readRepository, hasBranch, findOpenPull, createPull, updatePull };
