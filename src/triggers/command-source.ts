// What approval commands need of each tracker (approval-commands.ts): its comment events, the
// comments made on an issue since a time (the poll), whether a comment is the connection's own, and
// who may decide when the trigger names no approvers. One source per tracker under providers/
// (github-commands.ts, linear-commands.ts, jira-commands.ts), on that provider's own client.

import type { ApprovalDecider, Connection, TriggerConfig } from '../core/api';
import type { IncomingWebhook, WriteBackTarget } from './provider';

/** The person who wrote a comment. */
export interface CommentAuthor {
  /** The service's id of the person: GitHub's numeric user id, Linear's user id, Jira's accountId (Data Center: key). */
  id: string;
  /** How the issue's comment names them: `@alice` on GitHub, `Ada Lovelace` on Linear and Jira. */
  name: string;
  /**
   * What a trigger's `approvers` may name them by, compared ignoring letter case: the GitHub login;
   * Linear's user id and email; Jira's accountId and email (Data Center: name and key).
   */
  handles: string[];
}

/** A comment on an issue as the service has it. */
export interface IssueComment {
  /** The service's id: the same in a webhook, its replays and a poll. */
  id: string;
  /** Plain text (Markdown, wiki markup, or an ADF body's text). */
  body: string;
  /** Absent: the service named nobody (a deleted user, an app). */
  author?: CommentAuthor;
  /** When it was made (ISO 8601), when the service says. */
  createdAt?: string;
}

/** A comment event of a verified webhook: the comment, and its issue by key or by the service's id. */
export interface CommentEvent {
  issueKey?: string;
  issueId?: string;
  comment: IssueComment;
}

export interface CommandSource {
  /** Where a decision from this tracker comes from. */
  via: ApprovalDecider['via'];
  /**
   * A verified webhook's new comment (created, not edited), or undefined when the delivery is no
   * comment event. Reads only the body; never throws on hostile input.
   */
  readWebhook(webhook: IncomingWebhook, trigger: TriggerConfig): CommentEvent | undefined;
  /**
   * The issue's comments made after `since` (ISO 8601), oldest first, with the tracker's cheapest
   * query (one request; at most 100 comments).
   */
  commentsSince(target: WriteBackTarget, since: string, signal?: AbortSignal): Promise<IssueComment[]>;
  /** The author with what the service knows of them beyond the event (Linear: the email). */
  complete?(connection: Connection, author: CommentAuthor): Promise<CommentAuthor>;
  /** True when the connection's own account wrote the comment (own-account.ts). */
  isOwnAccount(connection: Connection, author: CommentAuthor): Promise<boolean>;
  /**
   * With no `approvers` on the trigger: undefined when `author` may decide on the issue, else why
   * not, in words for the issue ("has no write access to acme/app").
   */
  mayDecide(target: WriteBackTarget, author: CommentAuthor): Promise<string | undefined>;
}
