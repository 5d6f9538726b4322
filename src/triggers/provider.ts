// The one interface every trigger kind implements for its webhooks (spec "Webhook server",
// "Provider webhooks"): first prove the sender knows the trigger's secret, then map the request to an
// issue. The generic kind lives in generic.ts; the tracker and code-host kinds plug in beside it.

import type { Issue, TriggerConfig } from '../core/api';

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

/** What a provider decides about a verified request; the webhook server maps it to a response. */
export type WebhookVerdict =
  /** Start a run for this issue, unless a run was already started for `key` (dedup per trigger). */
  | { kind: 'issue'; issue: Issue; key: string }
  /** 202 `{"ignored": true}`; `reason` goes to the trigger's ledger, e.g. `ignored: no title`. */
  | { kind: 'ignored'; reason: string }
  /** 400 `{"error": reason}`: a payload that could not be parsed. */
  | { kind: 'invalid'; reason: string };

export interface TriggerProvider {
  kind: TriggerConfig['kind'];
  /** True when the request proves it knows the trigger's secret (or no secret is set). Constant time. Runs BEFORE the body is parsed. */
  verify(webhook: IncomingWebhook, trigger: TriggerConfig): boolean;
  /** Maps a verified request to an issue, or says why it is ignored. Never throws on hostile input. */
  parse(webhook: IncomingWebhook, trigger: TriggerConfig): WebhookVerdict;
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
