// Approval commands on Jira issues (command-source.ts; PROVIDERS §2): `comment_created` (its
// `comment.body` ADF on Cloud v3 or text, `comment.author` with accountId, or name and key on Data
// Center), the issue's newest comments (GET …/issue/{key}/comment?orderBy=-created), the token's own
// user (GET /myself, once), and, with no approvers named, the issue's reporter and assignee as Jira
// has them now.

import { isRecord } from '../../core/validate';
import type { CommandSource, CommentAuthor, IssueComment } from '../command-source';
import { pageSize } from '../paging';
import { text, webhookJson } from '../provider';
import { adfToText, api, ownUser, rest } from './jira';

type Json = Record<string, unknown>;

/** The person of a Jira user object, or undefined without an id. */
function readAuthor(raw: unknown): CommentAuthor | undefined {
  if (!isRecord(raw)) return undefined;
  const id = text(raw.accountId) ?? text(raw.key) ?? text(raw.name);
  if (!id) return undefined;
  const handles = [text(raw.accountId), text(raw.emailAddress), text(raw.name), text(raw.key)].filter((handle): handle is string => Boolean(handle));
  return { id, name: text(raw.displayName) ?? text(raw.name) ?? id, handles };
}

/** A comment object (REST or webhook): its body as text whether ADF or a string. */
function readComment(raw: unknown): IssueComment | undefined {
  if (!isRecord(raw) || !text(raw.id)) return undefined;
  const body = typeof raw.body === 'string' ? raw.body : adfToText(raw.body);
  const author = readAuthor(raw.author);
  return { id: text(raw.id)!, body, ...(author ? { author } : {}), ...(text(raw.created) ? { createdAt: text(raw.created)! } : {}) };
}

/** True when a Jira user object is this person (by accountId, key or name). */
function isPerson(raw: unknown, author: CommentAuthor): boolean {
  return isRecord(raw) && [raw.accountId, raw.key, raw.name].some((id) => typeof id === 'string' && id === author.id);
}

export const jiraCommands: CommandSource = {
  via: 'jira',

  readWebhook(webhook) {
    const parsed = webhookJson(webhook.body.toString('utf8'));
    if ('verdict' in parsed || !isRecord(parsed.payload) || parsed.payload.webhookEvent !== 'comment_created') return undefined;
    const payload = parsed.payload as Json;
    const issueKey = isRecord(payload.issue) ? text(payload.issue.key) : undefined;
    const comment = readComment(payload.comment);
    return comment && issueKey ? { issueKey, comment } : undefined;
  },

  async commentsSince(target, since, signal) {
    const url = `${api(target.connection)}/issue/${encodeURIComponent(target.issue.key ?? '')}/comment?orderBy=-created&maxResults=${pageSize}`;
    const answer = await rest(target.connection, 'GET', url, undefined, signal);
    const comments = isRecord(answer.body) && Array.isArray(answer.body.comments) ? answer.body.comments : [];
    const after = Date.parse(since);
    // Newest first: the ones made since the time, oldest of them first.
    return comments.map(readComment).filter((comment): comment is IssueComment => comment !== undefined && Date.parse(comment.createdAt ?? '') >= after).reverse();
  },

  async isOwnAccount(connection, author) {
    const own = await ownUser(connection);
    return [own.accountId, own.key, own.name].includes(author.id);
  },

  async mayDecide(target, author) {
    const answer = await rest(target.connection, 'GET', `${api(target.connection)}/issue/${encodeURIComponent(target.issue.key ?? '')}?fields=reporter,assignee`);
    const fields = isRecord(answer.body) && isRecord(answer.body.fields) ? answer.body.fields : {};
    return isPerson(fields.reporter, author) || isPerson(fields.assignee, author) ? undefined : `is neither the reporter nor the assignee of ${target.issue.key}`;
  },
};
