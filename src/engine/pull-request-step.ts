// The pullRequest step (PROVIDERS §6). In order, stopping at the first problem with its cause in
// words:
//   1. the account (a GitHub connection), the remote, and the repository (given, or read from the
//      remote's URL); GitHub's word that the repository exists, that the token may push to it, and
//      that `base` exists; all before anything is pushed;
//   2. what is left uncommitted in the workspace becomes one commit naming the run and the issue;
//   3. the branch must have commits that `base` does not have (else there is nothing to propose);
//   4. `git push --force-with-lease` of HEAD to `refs/heads/<branch>`: the user's own git and
//      credentials, with the environment every git command of a run gets; GitHub's token never
//      reaches git. The lease expects the remote branch where this repository last saw it (absent
//      for a new branch; the fetched head for a follow-up), so nobody's commits are overwritten;
//   5. the open pull request for `owner:branch` is looked for first and updated; else one is
//      created, and a create GitHub answers "already exists" finds and updates that one. So a
//      retry, a crash between GitHub creating it and Factory recording it, or a second run on the
//      branch never makes a second pull request. The pull request is written on the step as soon
//      as it is known.
// Titles and bodies are templates filled with the run's values as text (no shell anywhere), and
// name the issue so each tracker links the pull request (PROVIDERS §6 "Linking a PR to an issue").

import type { Connection, Issue, PullRequestRef, PullRequestStep, Run, StepRun } from '../core/api';
import { errorMessage, quote } from '../core/errors';
import { renderTemplate } from '../core/template';
import { redactUrl } from '../net/http';
import { repositoryOfRemote, repositoryPattern } from '../core/github-repository';
import { commitEverything } from './kept-work';
import { runProcess } from './process';
import type { StepAttempt, StepOutcome, StepRunner } from './steps';
import { git, worktreeBranch, type CommandRunner, type GitContext } from './workspace';

/** A pull request as GitHub answers it, the fields Factory uses. */
export interface GitHubPull {
  number: number;
  /** The web page (`html_url`). */
  url: string;
  state: 'open' | 'closed' | 'merged';
}

/** What a repository says before a push. */
export interface GitHubRepository {
  defaultBranch: string;
  /** false when GitHub says the token may not push (`permissions.push`); undefined when it does not say. */
  canPush?: boolean;
}

export interface NewPull {
  title: string;
  body: string;
  head: string;
  base: string;
  draft?: boolean;
}

/** What creating a pull request came to. */
export type CreateOutcome =
  | { kind: 'created'; pull: GitHubPull }
  /** "A pull request already exists for owner:branch." */
  | { kind: 'exists' }
  /** "No commits between main and feature." */
  | { kind: 'nothing'; message: string }
  /** Another 422: GitHub's words (a head or base it does not know, a field it refused). */
  | { kind: 'refused'; message: string };

/** GitHub's pull requests, as the step needs them (triggers/github-pulls.ts); each throws in GitHub's words. */
export interface PullRequestHost {
  /** The repository's default branch and push permission; undefined when the token cannot see it. */
  readRepository(connection: Connection, repository: string, signal?: AbortSignal): Promise<GitHubRepository | undefined>;
  hasBranch(connection: Connection, repository: string, branch: string, signal?: AbortSignal): Promise<boolean>;
  /** The open pull request whose head is `branch` of the repository's owner. */
  findOpenPull(connection: Connection, repository: string, branch: string, signal?: AbortSignal): Promise<GitHubPull | undefined>;
  createPull(connection: Connection, repository: string, pull: NewPull, signal?: AbortSignal): Promise<CreateOutcome>;
  updatePull(connection: Connection, repository: string, number: number, change: { title: string; body: string }, signal?: AbortSignal): Promise<GitHubPull>;
}

interface PullRequestRunnerOptions {
  /** The connection of that id, token included; undefined when there is none. */
  connection(id: string): Connection | undefined;
  github: PullRequestHost;
  /** Runs git (default: runProcess). */
  run?: CommandRunner;
}

/** GitHub cuts titles longer than this. */
const titleLimit = 256;
/** git's last error lines quoted in a failure. */
const errorLinesShown = 4;
const defaultRemote = 'origin';

/** The step cannot go on; the message says why and what to check. */
class PullRequestFailure extends Error {}

export function createPullRequestRunner(options: PullRequestRunnerOptions): StepRunner {
  const run = options.run ?? ((command) => runProcess(command));
  return async (attempt) => {
    if (attempt.step.kind !== 'pullRequest') return { status: 'failed', error: `Step ${quote(attempt.step.id)} is not a pullRequest step` };
    // The step's own time limit covers git and GitHub alike.
    const signal = AbortSignal.any([attempt.signal, AbortSignal.timeout(attempt.timeoutMs)]);
    try {
      return await proposeWork(attempt, attempt.step, { ...options, run }, signal);
    } catch (error) {
      if (attempt.signal.aborted) return { status: 'cancelled' };
      if (signal.aborted) return { status: 'failed', error: `The step timed out after ${Math.round(attempt.timeoutMs / 1000)} s` };
      return { status: 'failed', error: errorMessage(error) };
    }
  };
}

async function proposeWork(attempt: StepAttempt, step: PullRequestStep, options: Required<PullRequestRunnerOptions>, signal: AbortSignal): Promise<StepOutcome> {
  const connection = accountOf(step, options.connection(step.connectionId));
  const errorLines: string[] = [];
  const context: GitContext = {
    // A push that would ask for a password fails at once instead of waiting for a terminal.
    env: { ...attempt.environment, GIT_TERMINAL_PROMPT: '0' },
    run: options.run,
    signal,
    repository: attempt.workspace,
    log: (line, stream) => {
      attempt.log(line, stream);
      if (stream === 'err' && line.trim()) errorLines.push(line.trim());
    },
  };
  const gitSaid = () => errorLines.slice(-errorLinesShown).join(' / ') || 'no error message';
  const run = attempt.run;
  const followUp = run?.followUp;
  const remote = step.remote ?? followUp?.remote ?? defaultRemote;
  const branch = followUp?.branch ?? worktreeBranch(attempt.runId);

  // 1. Where to: checked before anything is pushed.
  const remoteUrl = await remoteUrlOf(context, remote);
  if (remoteUrl === undefined) throw new PullRequestFailure(`The workspace's repository has no git remote ${quote(remote)}: add it (git remote add ${remote} <url>) or name another remote in the step`);
  const repository = step.repository ?? repositoryOfRemote(remoteUrl);
  if (!repository) {
    throw new PullRequestFailure(`The remote ${quote(remote)} is ${describeRemote(remoteUrl)}, which names no GitHub repository: set the step's repository to owner/name`);
  }
  if (!repositoryPattern.test(repository)) throw new PullRequestFailure(`The step's repository ${quote(repository)} is not owner/name`);
  const found = await options.github.readRepository(connection, repository, signal);
  if (!found) throw new PullRequestFailure(`GitHub has no repository ${repository} that the account ${quote(connection.name)} can see: check the step's repository and the account's access`);
  if (found.canPush === false) {
    throw new PullRequestFailure(`The account ${quote(connection.name)} may not push to ${repository} (GitHub says so): give it write access, or use an account that has it`);
  }
  const base = step.base ?? found.defaultBranch;
  if (step.base !== undefined && !(await options.github.hasBranch(connection, repository, base, signal))) {
    throw new PullRequestFailure(`${repository} has no branch ${quote(base)} on GitHub: set the step's base to a branch that exists (its default branch is ${found.defaultBranch})`);
  }

  // A follow-up pushes onto its pull request's branch: only work that builds on that branch may go there.
  if (followUp) {
    const builds = await git(context, ['merge-base', '--is-ancestor', `refs/remotes/${remote}/${branch}`, 'HEAD']);
    if (!builds.ok) throw new PullRequestFailure(`The workspace does not build on the pull request's branch ${branch} as fetched from ${quote(remote)}: nothing was pushed (does the project use worktrees?)`);
  }

  // 2. What is left in the workspace.
  const committed = await commitEverything(context, commitMessage(attempt.runId, attempt.template.issue));
  if (committed === undefined) throw new PullRequestFailure(`Committing what was left in the workspace failed: ${gitSaid()}`);
  attempt.log(committed ? 'Committed what was left uncommitted in the workspace.' : 'Nothing was left uncommitted in the workspace.', 'info');

  // 3. Something to propose?
  errorLines.length = 0;
  const fetched = await git(context, ['fetch', '--quiet', '--no-tags', remote, `refs/heads/${base}`]);
  if (!fetched.ok) {
    throw new PullRequestFailure(`git could not fetch ${quote(base)} from the remote ${quote(remote)}: ${gitSaid()}. Check your git credentials for ${describeRemote(remoteUrl)}, and that the remote is ${repository}`);
  }
  const ahead = await git(context, ['rev-list', '--count', 'FETCH_HEAD..HEAD']);
  if (ahead.ok && Number(ahead.lines[0]) === 0) throw new PullRequestFailure(`Nothing to propose: the branch has no commits that ${base} does not have`);

  // 4. Push, with the user's own credentials.
  errorLines.length = 0;
  const pushed = await git(context, ['push', `--force-with-lease=refs/heads/${branch}`, remote, `HEAD:refs/heads/${branch}`]);
  if (!pushed.ok) {
    throw new PullRequestFailure(`git push to ${quote(remote)} was refused: ${gitSaid()}. Check your git credentials for ${describeRemote(remoteUrl)}, the branch protection rules of ${repository}, and that the remote's URL is right`);
  }
  attempt.log(`Pushed the work to ${branch} on ${remote} (${repository}).`, 'info');

  // 5. One pull request for the branch.
  const record = (pull: GitHubPull) => attempt.recordPullRequest?.({ number: pull.number, url: pull.url, repository, branch, state: 'open' } satisfies PullRequestRef);
  const open = await options.github.findOpenPull(connection, repository, branch, signal);
  let pull: GitHubPull;
  if (followUp && open) {
    // A review's follow-up adds commits; the pull request keeps its title and description.
    await record(open);
    attempt.log(`Pull request #${open.number} has the new commits: ${open.url}`, 'info');
    return { status: 'succeeded', output: `Pull request #${open.number}: ${open.url}\n` };
  }
  const { title, body } = proposal(attempt, step);
  if (open) {
    await record(open);
    attempt.log(`Pull request #${open.number} is already open for ${branch}; updating its title and description.`, 'info');
    pull = await options.github.updatePull(connection, repository, open.number, { title, body }, signal);
    attempt.log(`Updated pull request #${pull.number}: ${pull.url}`, 'info');
  } else {
    const created = await options.github.createPull(connection, repository, { title, body, head: branch, base, ...(step.draft ? { draft: true } : {}) }, signal);
    if (created.kind === 'nothing') throw new PullRequestFailure(`Nothing to propose: GitHub says ${created.message}`);
    if (created.kind === 'refused') throw new PullRequestFailure(`GitHub refused to open the pull request from ${branch} to ${base}: ${created.message}`);
    if (created.kind === 'created') {
      pull = created.pull;
      await record(pull);
      attempt.log(`Opened ${step.draft ? 'draft ' : ''}pull request #${pull.number} from ${branch} to ${base}: ${pull.url}`, 'info');
    } else {
      // Opened meanwhile (another attempt, another run on the branch): that one is updated.
      const existing = await options.github.findOpenPull(connection, repository, branch, signal);
      if (!existing) throw new PullRequestFailure(`GitHub says a pull request for ${branch} already exists, but lists none open: look at the pull requests of ${repository}`);
      await record(existing);
      attempt.log(`GitHub says pull request #${existing.number} is already open for ${branch}; updating it.`, 'info');
      pull = await options.github.updatePull(connection, repository, existing.number, { title, body }, signal);
      attempt.log(`Updated pull request #${pull.number}: ${pull.url}`, 'info');
    }
  }
  await record(pull);
  return { status: 'succeeded', output: `Pull request #${pull.number}: ${pull.url}\n` };
}

/** The step's connection, when it is a GitHub account. */
function accountOf(step: PullRequestStep, connection: Connection | undefined): Connection {
  if (!connection) throw new PullRequestFailure(`There is no account ${quote(step.connectionId)} (deleted?): choose a GitHub account in the step`);
  if (connection.kind !== 'github') throw new PullRequestFailure(`The account ${quote(connection.name)} is a ${connection.kind} account: a pull request needs a GitHub account`);
  return connection;
}

/** `git remote get-url <remote>`, not logged (a URL may carry credentials); undefined when there is no such remote. */
async function remoteUrlOf(context: GitContext, remote: string): Promise<string | undefined> {
  const lines: string[] = [];
  const result = await context.run({
    command: 'git', args: ['-C', context.repository, 'remote', 'get-url', remote], cwd: context.repository, env: context.env,
    ...(context.signal ? { signal: context.signal } : {}),
    onLine: (line, stream) => {
      if (stream === 'out') lines.push(line);
    },
  });
  if (result.cancelled) throw new PullRequestFailure('Cancelled');
  return result.exitCode === 0 && lines[0]?.trim() ? lines[0].trim() : undefined;
}

/** A remote's URL as it may be shown: credentials and secret-looking parts hidden; a path as it is. */
function describeRemote(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return redactUrl(url);
  if (/^[^/\s]+@[^/\s:]+:/.test(url)) return url;
  return `the local folder ${url}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The commit of what was left: it names the run and the issue. */
function commitMessage(runId: string, issue: Issue | undefined): string {
  const about = issue ? oneLine(`${issue.key ?? ''} ${issue.title}`) : '';
  return `Factory run ${runId}${about ? `: ${about}` : ''}`;
}

/**
 * How the pull request names the issue so its tracker links it: GitHub's closing keyword with the
 * full reference, a closing word before Linear's identifier; Jira links by the key in the title.
 */
function issueLinkLine(issue: Issue | undefined): string | undefined {
  const key = issue?.key?.trim();
  if (!issue || !key) return undefined;
  if (issue.source === 'github' && /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+#\d+$/.test(key)) return `Closes ${key}`;
  if (issue.source === 'linear' && /^[A-Za-z][A-Za-z0-9]*-\d+$/.test(key)) return `Fixes ${key}`;
  return undefined;
}

const statusWords: Record<StepRun['status'], string> = {
  pending: 'not run', running: 'running', waiting: 'waiting', succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled', rejected: 'rejected', skipped: 'skipped',
};

/** The title and body: the step's templates filled in, or the defaults; the issue named either way. */
function proposal(attempt: StepAttempt, step: PullRequestStep): { title: string; body: string } {
  const issue = attempt.template.issue;
  let title = oneLine(renderTemplate(step.title ?? '{{issue.title}}', attempt.template));
  if (!title) title = `Work of Factory run ${attempt.runId}`;
  const key = issue?.key?.trim();
  if (issue?.source === 'jira' && key && !title.toUpperCase().includes(key.toUpperCase())) title = `${key} ${title}`;
  if (title.length > titleLimit) title = `${title.slice(0, titleLimit - 1)}…`;

  const link = issueLinkLine(issue);
  let body = step.body !== undefined ? renderTemplate(step.body, attempt.template).trim() : defaultBody(attempt, link);
  if (link && !body.toLowerCase().includes(link.toLowerCase())) body = `${body}\n\n${link}`.trim();
  return { title, body };
}

/** What the run did (each earlier step and how it went), the issue, and the run. */
function defaultBody(attempt: StepAttempt, link: string | undefined): string {
  const issue = attempt.template.issue;
  const lines: string[] = [];
  if (link) lines.push(link);
  if (issue?.url) lines.push(`Issue: ${issue.key ? `${issue.key} ` : ''}${issue.url}`);
  else if (issue?.key && !link) lines.push(`Issue: ${issue.key}`);
  const run: Readonly<Run> | undefined = attempt.run;
  const earlier = run ? run.steps.slice(0, Math.max(0, run.steps.findIndex((candidate) => candidate.id === attempt.step.id))) : [];
  if (earlier.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push('What the run did:');
    for (const stepRun of earlier) lines.push(`- ${oneLine(stepRun.name)} (${stepRun.kind}): ${stepRun.approval?.approved ? 'approved' : statusWords[stepRun.status]}`);
  }
  if (lines.length > 0) lines.push('');
  lines.push(`Factory run ${attempt.runId}${attempt.template.run.url ? ` (${attempt.template.run.url})` : ''}`);
  return lines.join('\n');
}
