// GitHub's own example webhook bodies for the review loop (octokit/webhooks payload-examples,
// api.github.com: pull_request_review/submitted, pull_request_review_comment/created,
// issue_comment/created on a pull request, pull_request/closed), trimmed to the fields a receiver
// reads and the envelope around them, with their real ids (review 237895671 and its comment
// 284312630 are one single-line comment: GitHub sends both events). `aimed` points a copy at a
// pull request of the fake GitHub: its repository, number, branch, title, URL and state.

type Json = Record<string, any>;

const codertocat = { login: 'Codertocat', id: 21031067, node_id: 'MDQ6VXNlcjIxMDMxMDY3', avatar_url: 'https://avatars1.githubusercontent.com/u/21031067?v=4', url: 'https://api.github.com/users/Codertocat', html_url: 'https://github.com/Codertocat', type: 'User', site_admin: false };
const helloWorld = { id: 186853002, node_id: 'MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=', name: 'Hello-World', full_name: 'Codertocat/Hello-World', private: false, owner: codertocat, html_url: 'https://github.com/Codertocat/Hello-World', default_branch: 'master' };

function pullRequest(state: 'open' | 'closed'): Json {
  return {
    url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2', id: 279147437, node_id: 'MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3',
    html_url: 'https://github.com/Codertocat/Hello-World/pull/2', issue_url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/2',
    number: 2, state, locked: false, title: 'Update the README with new information.', user: codertocat,
    body: 'This is a pretty simple change that we need to pull into master.',
    created_at: '2019-05-15T15:20:33Z', updated_at: state === 'open' ? '2019-05-15T15:20:38Z' : '2019-05-15T15:21:18Z',
    closed_at: state === 'open' ? null : '2019-05-15T15:21:18Z', merged_at: null, merge_commit_sha: 'c4295bd74fb0f4fda03689c3df3f2803b658fd85',
    labels: [{ id: 1362934389, node_id: 'MDU6TGFiZWwxMzYyOTM0Mzg5', name: 'bug', color: 'd73a4a', default: true }],
    head: { label: 'Codertocat:changes', ref: 'changes', sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821', user: codertocat, repo: helloWorld },
    base: { label: 'Codertocat:master', ref: 'master', sha: 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e', user: codertocat, repo: helloWorld },
    author_association: 'OWNER',
  };
}

/** pull_request_review / submitted: a single-line comment's review (state commented, body null). */
export function reviewSubmitted(): Json {
  return {
    action: 'submitted',
    review: {
      id: 237895671, node_id: 'MDE3OlB1bGxSZXF1ZXN0UmV2aWV3MjM3ODk1Njcx', user: codertocat, body: null,
      commit_id: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821', submitted_at: '2019-05-15T15:20:38Z', state: 'commented',
      html_url: 'https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671',
      pull_request_url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2', author_association: 'OWNER',
    },
    pull_request: pullRequest('open'), repository: helloWorld, sender: codertocat,
  };
}

/** pull_request_review_comment / created: the comment of that review. */
export function reviewCommentCreated(): Json {
  return {
    action: 'created',
    comment: {
      url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/comments/284312630', pull_request_review_id: 237895671, id: 284312630,
      node_id: 'MDI0OlB1bGxSZXF1ZXN0UmV2aWV3Q29tbWVudDI4NDMxMjYzMA==', diff_hunk: '@@ -1 +1 @@\n-# Hello-World', path: 'README.md', position: 1, original_position: 1,
      commit_id: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821', original_commit_id: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821', user: codertocat,
      body: 'Maybe you should use more emojji on this line.', created_at: '2019-05-15T15:20:37Z', updated_at: '2019-05-15T15:20:38Z',
      html_url: 'https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630', pull_request_url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2',
      author_association: 'OWNER', start_line: null, original_start_line: null, start_side: null, line: 265, original_line: 265, side: 'RIGHT',
    },
    pull_request: pullRequest('open'), repository: helloWorld, sender: codertocat,
  };
}

/** issue_comment / created, on a pull request (`issue.pull_request` set; no head branch in it). */
export function pullRequestCommentCreated(body: string): Json {
  return {
    action: 'created',
    issue: {
      url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/2', html_url: 'https://github.com/Codertocat/Hello-World/pull/2', id: 444500041,
      node_id: 'MDU6SXNzdWU0NDQ1MDAwNDE=', number: 2, title: 'Update the README with new information.', user: codertocat, labels: [], state: 'open',
      locked: false, assignee: null, assignees: [], comments: 1, created_at: '2019-05-15T15:20:33Z', updated_at: '2019-05-15T15:20:42Z', closed_at: null,
      author_association: 'OWNER', body: 'This is a pretty simple change that we need to pull into master.',
      pull_request: { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2', html_url: 'https://github.com/Codertocat/Hello-World/pull/2', diff_url: 'https://github.com/Codertocat/Hello-World/pull/2.diff', patch_url: 'https://github.com/Codertocat/Hello-World/pull/2.patch', merged_at: null },
    },
    comment: {
      url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/comments/492700400', html_url: 'https://github.com/Codertocat/Hello-World/pull/2#issuecomment-492700400',
      issue_url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/2', id: 492700400, node_id: 'MDEyOklzc3VlQ29tbWVudDQ5MjcwMDQwMA==', user: codertocat,
      created_at: '2019-05-15T15:20:21Z', updated_at: '2019-05-15T15:20:21Z', author_association: 'OWNER', body, performed_via_github_app: null,
    },
    repository: helloWorld, sender: codertocat,
  };
}

/** pull_request / closed: merged or not (`merged`, `merged_at`). */
export function pullRequestClosed(merged: boolean): Json {
  const pull = { ...pullRequest('closed'), merged, ...(merged ? { merged_at: '2019-05-15T15:21:18Z', merged_by: codertocat } : {}) };
  return { action: 'closed', number: 2, pull_request: pull, repository: helloWorld, sender: codertocat };
}

/** Where a copy of an example is pointed. */
export interface PullTarget { repo: string; number: number; head: string; title: string; htmlUrl: string }

/**
 * A copy of `payload` about the fake's pull request: repository, number, head branch, title and
 * links rewritten; `author` (login and id) writes the review or comment and sends the event.
 */
export function aimed(payload: Json, target: PullTarget, author?: { login: string; id: number }): Json {
  const copy = structuredClone(payload);
  const [owner, name] = target.repo.split('/');
  const repository = { ...copy.repository, name, full_name: target.repo, owner: { ...copy.repository.owner, login: owner } };
  copy.repository = repository;
  for (const pull of [copy.pull_request, copy.issue?.pull_request ? copy.issue : undefined]) {
    if (!pull) continue;
    Object.assign(pull, { number: target.number, title: target.title, html_url: target.htmlUrl });
    if (pull.head) pull.head = { ...pull.head, ref: target.head, label: `${owner}:${target.head}`, repo: repository };
    if (pull.base) pull.base = { ...pull.base, repo: repository };
  }
  if (copy.issue?.pull_request) copy.issue.pull_request.html_url = target.htmlUrl;
  if (typeof copy.number === 'number') copy.number = target.number;
  if (author) {
    for (const item of [copy.review, copy.comment]) if (item) item.user = { ...item.user, ...author };
    copy.sender = { ...copy.sender, ...author };
  }
  return copy;
}
