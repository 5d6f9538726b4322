// Approval commands on Linear issues (command-source.ts; PROVIDERS §1): the `Comment` create
// webhook (`data.body`, `data.issueId`, `data.userId` / `data.user`), the issue's comments since a
// time (issue(id) { comments(filter: { createdAt: { gt } }) }), the key's own user (viewer, once), and,
// with no approvers named, members of the workspace: an active user who is not a guest (User.guest),
// asked of Linear and kept 5 minutes.

import type { Connection } from '../../core/api';
import { isRecord } from '../../core/validate';
import type { CommandSource, CommentAuthor, IssueComment } from '../command-source';
import { ExpiringCache } from '../expiring-cache';
import { ownAccount } from '../own-account';
import { pageSize } from '../paging';
import { text, webhookJson } from '../provider';
import { graphql } from './linear';

type Json = Record<string, unknown>;

const userFields = 'id name displayName email guest active';
/** What Linear said of each user (guest, active, email), trusted 5 minutes. */
const users = new ExpiringCache<Json | undefined>(5 * 60_000);

function readAuthor(raw: unknown, fallbackId?: string): CommentAuthor | undefined {
  const user = isRecord(raw) ? raw : {};
  const id = text(user.id) ?? fallbackId;
  if (!id) return undefined;
  const email = text(user.email);
  return { id, name: text(user.name) ?? text(user.displayName) ?? email ?? id, handles: [id, ...(email ? [email] : [])] };
}

function readComment(raw: unknown, fallbackUserId?: string): IssueComment | undefined {
  if (!isRecord(raw) || !text(raw.id)) return undefined;
  const author = readAuthor(raw.user, fallbackUserId);
  return { id: text(raw.id)!, body: text(raw.body) ?? '', ...(author ? { author } : {}), ...(text(raw.createdAt) ? { createdAt: text(raw.createdAt)! } : {}) };
}

/** The user as Linear has it now (kept 5 minutes per account and user); undefined when Linear knows none. */
function userOf(connection: Connection, id: string): Promise<Json | undefined> {
  return users.get(`${connection.id}\n${id}`, async () => {
    const data = await graphql(connection, `query FactoryCommenter($id: String!) { user(id: $id) { ${userFields} } }`, { id });
    return isRecord(data.user) ? data.user : undefined;
  });
}

export const linearCommands: CommandSource = {
  via: 'linear',

  readWebhook(webhook) {
    const parsed = webhookJson(webhook.body.toString('utf8'));
    if ('verdict' in parsed || !isRecord(parsed.payload)) return undefined;
    const payload = parsed.payload as Json;
    if (payload.type !== 'Comment' || payload.action !== 'create' || !isRecord(payload.data)) return undefined;
    const data = payload.data;
    const comment = readComment(data, text(data.userId));
    const issueId = text(data.issueId) ?? (isRecord(data.issue) ? text(data.issue.id) : undefined);
    const issueKey = isRecord(data.issue) ? text(data.issue.identifier) : undefined;
    return comment && (issueId || issueKey) ? { ...(issueKey ? { issueKey } : {}), ...(issueId ? { issueId } : {}), comment } : undefined;
  },

  async commentsSince(target, since, signal) {
    const id = text(target.issue.raw?.id) ?? target.issue.key ?? '';
    const data = await graphql(target.connection, `query FactoryCommands($id: String!, $since: DateTimeOrDuration!) {
      issue(id: $id) { comments(first: ${pageSize}, filter: { createdAt: { gt: $since } }) { nodes { id body createdAt user { ${userFields} } } } } }`, { id, since }, signal);
    const connection = isRecord(data.issue) && isRecord(data.issue.comments) ? data.issue.comments : {};
    const nodes = Array.isArray(connection.nodes) ? connection.nodes : [];
    return nodes.map((node) => readComment(node)).filter((comment): comment is IssueComment => comment !== undefined)
      .sort((left, right) => Date.parse(left.createdAt ?? '') - Date.parse(right.createdAt ?? ''));
  },

  async complete(connection, author) {
    const user = await userOf(connection, author.id);
    return user ? readAuthor(user, author.id)! : author;
  },

  async isOwnAccount(connection, author) {
    const viewer = await ownAccount(connection, async () => {
      const data = await graphql(connection, 'query FactoryViewer { viewer { id name email } }');
      return isRecord(data.viewer) ? text(data.viewer.id) : undefined;
    });
    return viewer === author.id;
  },

  async mayDecide(target, author) {
    const user = await userOf(target.connection, author.id);
    if (!user) return 'is not a user Linear knows';
    if (user.active === false) return 'is a deactivated user';
    return user.guest === true ? 'is a guest of the workspace, not a member' : undefined;
  },
};
