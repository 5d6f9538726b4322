// What a trigger kind implements (spec "Webhook server", "Provider webhooks"): every kind proves a
// webhook's sender knows the trigger's secret, then maps the request to an issue; the trackers
// (providers/linear.ts, jira.ts, github.ts) also verify accounts, poll, filter and write back.

import type { Connection, ConnectionAccount, Issue, RunFollowUp, TriggerConfig } from '../core/api';
import { FactoryError } from '../core/errors';
import type { CommentDocument } from './comment-text';

/**
 * One request to `/hooks/<trigger-id>`, as the webhook server hands it over: the raw body bytes
 * (signatures are computed over these, never over re-encoded JSON), the headers (Node's lower-case
 * names; a lookup through `readHeader` also finds other spellings), the decoded query parameters
 * and when the request arrived (epoch milliseconds).
 */
export interface IncomingWebhook {
  body: Buffer;
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  receivedAt: number;
}

/** An issue as a provider saw it, by a poll or in a webhook. */
export interface ObservedIssue {
  issue: Issue;
  /** The dedup key (Linear `ENG-123`, GitHub `owner/repo#7`, Jira `ABC-7`, or the webhook's). */
  key: string;
  /** Why the issue is outside the trigger's filter now; absent: it matches. */
  outside?: string;
  /** The provider's time of the issue's last change (ISO 8601): an event older than one seen is stale. */
  updatedAt?: string;
  /**
   * The pull request a follow-up run continues (a 'github-review' trigger): `key` then names the
   * review or comment answered, the run's issue keeps its own key (`owner/repo#12`), and the
   * trigger's `maxFollowUps` limits the runs per pull request.
   */
  followUp?: RunFollowUp;
}

/** What a provider decides about a verified request; the trigger service maps it to an answer. */
export type WebhookVerdict =
  /** An issue to admit: a run starts when it matches and its key is not processed (dedup per trigger). */
  | ({ kind: 'issue'; /** The provider's id of this delivery, the same on its retries. */ deliveryId?: string } & ObservedIssue)
  /** 202 `{"ignored": true}`; `reason` goes to the trigger's ledger, e.g. `ignored: no title`. */
  | { kind: 'ignored'; reason: string }
  /** 400 `{"error": reason}`: a payload that could not be parsed. */
  | { kind: 'invalid'; reason: string }
  /** 401 `invalid signature`: signed, but not acceptable (`reason` for the ledger, e.g. a stale timestamp). */
  | { kind: 'refused'; reason: string }
  /** Answered as it is (GitHub's `ping`: 200 `{"ok": true}`). */
  | { kind: 'answer'; status: 200; body: Record<string, unknown>; reason: string }
  /**
   * Decided only after asking the service (a pull request review: its pull request, its author's
   * access, its comments): `decide` gives the issue to admit, or the ledger reason it is ignored.
   */
  | { kind: 'deferred'; key: string; deliveryId?: string; decide: () => Promise<ObservedIssue | { ignored: string }> };

/** The webhook half of a trigger kind: every kind has it, the generic webhook has nothing else. */
export interface WebhookProvider {
  /** True when the request proves it knows the trigger's secret (or no secret is set). Constant time. Runs BEFORE the body is parsed. */
  verifyWebhook(webhook: IncomingWebhook, trigger: TriggerConfig): boolean;
  /** Maps a verified request to an issue, or says why not. Never throws on hostile input. */
  parseWebhook(webhook: IncomingWebhook, trigger: TriggerConfig, connection?: Connection): WebhookVerdict;
}

/** A step of write-back: keep the run's one comment current, and mark the issue. */
export interface WriteBackTarget {
  connection: Connection;
  trigger: TriggerConfig;
  /** The run's issue, with the provider's own object in `raw`. */
  issue: Issue;
}

/**
 * A tracker or code host (Linear, Jira, GitHub): one file each under providers/. Every method
 * that talks to the service throws ProviderError (or the client's NetworkError) with a message a
 * user can act on, never a token.
 */
export interface TrackerProvider extends WebhookProvider {
  /** The service's name in messages: `Linear`. */
  name: string;
  /** Checks the credentials and returns the account they belong to. */
  verifyConnection(connection: Connection): Promise<ConnectionAccount>;
  /** Checks a trigger's filter against the service (an unknown team, repo or query): ValidationError naming it. */
  checkTrigger(trigger: TriggerConfig, connection: Connection): Promise<void>;
  /**
   * The issues of the trigger, page by page; returns the cursor of the next incremental poll.
   * Without `cursor` (a full poll) it yields every issue that matches now, so a processed issue
   * not among them has left the filter; with one, it yields the issues changed since, each with
   * `outside` set when it does not match. Pages are read through `pages` (paging.ts): a service
   * that sends the same page again, or more than `maxPagesPerPoll` pages, ends the poll with a
   * ProviderError. `signal` aborts the request under way (Factory is stopping).
   */
  poll(trigger: TriggerConfig, connection: Connection, cursor?: string, signal?: AbortSignal): AsyncGenerator<ObservedIssue[], string | undefined>;
  /**
   * The issue as the service has it now (undefined: it does not exist). An event of a trigger
   * without a webhook secret is unverified, so its issue is read from here, not from the body.
   */
  fetchIssue(trigger: TriggerConfig, connection: Connection, key: string): Promise<ObservedIssue | undefined>;
  /**
   * How often a poll must be full although a cursor exists: a provider whose incremental polls
   * cannot see issues leave the filter (Jira's query runs at Jira) finds them by a full poll.
   */
  fullPollEveryMs?: number;
  /** Why a provider issue object is outside the trigger's filter; undefined when it matches. */
  filter(trigger: TriggerConfig, raw: Record<string, unknown>, connection: Connection): string | undefined;
  /**
   * Creates or edits the run's comment, written in the tracker's own syntax (comment-text.ts). When
   * `commentId` is unknown, the comment is found again among those of the connection's own account
   * whose first line names the run (`isRunComment`); another author's comment is never adopted.
   * Returns its id.
   */
  upsertComment(target: WriteBackTarget, comment: CommentDocument, commentId?: string): Promise<string>;
  /** Moves the issue to the state (or label) `name` the trigger's write-back names. */
  mark(target: WriteBackTarget, name: string, previous?: string): Promise<void>;
}

/** A service refused or failed in its own words. `retryAt`: a rate limit lifts then. */
export class ProviderError extends FactoryError {
  override name = 'ProviderError';
  constructor(message: string, readonly retryable = false, readonly retryAt?: number) {
    super(message);
  }
}

/**
 * The value of one header, found by its name in any letter case; undefined when it is absent or not
 * a single string. Only the object's own properties are read, so `constructor` is never a header.
 */
export function readHeader(webhook: Pick<IncomingWebhook, 'headers'>, name: string): string | undefined {
  const headers = webhook.headers;
  const lowerName = name.toLowerCase();
  let value = Object.hasOwn(headers, lowerName) ? headers[lowerName] : undefined;
  if (value === undefined) {
    for (const header of Object.keys(headers)) {
      if (header.toLowerCase() === lowerName) {
        value = headers[header];
        break;
      }
    }
  }
  return typeof value === 'string' ? value : undefined;
}

/** The value of one query parameter, or undefined (own properties only). */
export function readQuery(webhook: Pick<IncomingWebhook, 'query'>, name: string): string | undefined {
  const value = Object.hasOwn(webhook.query, name) ? webhook.query[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

// ─── Small readers every provider uses on the services' JSON ───

/** A string, or undefined for anything else. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Equal ignoring letter case (undefined equals nothing). */
export function same(left: string | undefined, right: string): boolean {
  return left !== undefined && left.toLowerCase() === right.toLowerCase();
}

/** The value of a JSON text, or undefined when it is not JSON (an empty answer, an HTML page). */
export function jsonValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A webhook body parsed as JSON, or the 400 verdict naming the parse error. */
export function webhookJson(text: string): { payload: unknown } | { verdict: WebhookVerdict } {
  try {
    return { payload: JSON.parse(text) };
  } catch (error) {
    return { verdict: { kind: 'invalid', reason: `the body is not JSON: ${(error as Error).message}` } };
  }
}

/** The verdict admitting an observed issue, with the delivery id the service sent (cut to 200 characters). */
export function issueVerdict(observed: ObservedIssue, deliveryId: string | undefined): WebhookVerdict {
  return { kind: 'issue', ...observed, ...(deliveryId ? { deliveryId: deliveryId.slice(0, 200) } : {}) };
}

/** True when some of `wanted` is among `names`, ignoring letter case. */
export function hasAnyOf(names: readonly string[], wanted: readonly string[]): boolean {
  return wanted.some((label) => names.some((name) => same(name, label)));
}
