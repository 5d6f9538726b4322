// Approval commands on GitHub issues (command-source.ts; PROVIDERS §3, §6): `issue_comment`
// created on an issue (not a pull request), the issue's comments since a time
// (GET …/issues/{n}/comments?since=), the token's own user by id (GET /user, once), and, with no
// approvers named, write access to the repository (the collaborator permission, cached 5 minutes).

import { isRecord } from '../../core/validate';
import type { CommandSource, CommentAuthor, IssueComment } from '../command-source';
import { pageSize } from '../paging';
import { text } from '../provider';
import { ownUserId, readGithubWebhook, repoOf, rest } from './github';
import { permissionOf, writeRoles } from './github-permissions';

/** A REST or webhook comment object as an IssueComment; undefined when it is not one. */
function readComment(raw: unknown): IssueComment | undefined {
  if (!isRecord(raw) || (typeof raw.id !== 'number' && typeof raw.id !== 'string')) return undefined;
  const user = isRecord(raw.user) ? raw.user : undefined;
  const login = text(user?.login);
  const author: CommentAuthor | undefined = login && user?.id !== undefined ? { id: String(user.id), name: `@${login}`, handles: [login] } : undefined;
  return { id: String(raw.id), body: text(raw.body) ?? '', ...(author ? { author } : {}), ...(text(raw.created_at) ? { createdAt: text(raw.created_at)! } : {}) };
}

export const githubCommands: CommandSource = {
  via: 'github',

  readWebhook(webhook, trigger) {
    const read = readGithubWebhook(webhook, repoOf(trigger));
    if ('verdict' in read || read.event !== 'issue_comment' || read.payload.action !== 'created') return undefined;
    const issue = read.payload.issue;
    if (!isRecord(issue) || 'pull_request' in issue || typeof issue.number !== 'number') return undefined;
    const comment = readComment(read.payload.comment);
    return comment ? { issueKey: `${repoOf(trigger)}#${issue.number}`, comment } : undefined;
  },

  async commentsSince(target, since, signal) {
    const number = target.issue.raw?.number;
    const answer = await rest(target.connection, 'GET', `/repos/${repoOf(target.trigger)}/issues/${String(number)}/comments?since=${encodeURIComponent(since)}&per_page=${pageSize}`, signal ? { signal } : {});
    if (answer.status === 404 || !Array.isArray(answer.body)) return [];
    // `since` is on the update time: a comment made before it and edited since is no new command.
    return answer.body.map(readComment).filter((comment): comment is IssueComment => comment !== undefined && Date.parse(comment.createdAt ?? '') >= Date.parse(since));
  },

  async isOwnAccount(connection, author) {
    return (await ownUserId(connection)) === author.id;
  },

  async mayDecide(target, author) {
    const repository = repoOf(target.trigger);
    const login = author.handles[0] ?? '';
    const permission = await permissionOf(target.connection, repository, login);
    return writeRoles.includes(permission) ? undefined : `has no write access to ${repository} (${permission})`;
  },
};
