// The generic webhook trigger (kind 'webhook'; spec "Generic webhook trigger payload" and
// "Authentication/Webhook server"): any sender that knows the trigger's secret POSTs a JSON object,
// or plain text, and a run starts for the issue read from it.
//
// Payload rules, in the spec's order (fields are read only from the body object's own properties):
//   title        `title`, else `summary`, else the `title` query parameter: strings, trimmed; other
//                types are not titles. No title: ignored (`ignored: no title`).
//   description  `description`, else `body` (strings with some non-space text, kept as sent); else
//                omitted.
//   key          `key`, else `id` (a string, trimmed, or a finite number as its decimal text); else a
//                generated `HOOK-<receivedAt>`.
//   url          a string; priority: a string or a number, as text.
//   labels       an array: its strings (trimmed, blanks dropped) and numbers (as text) are kept, other
//                items dropped. `labels` that is not an array is ignored, not an error.
//   raw          the whole parsed body object (JSON.parse output: a `__proto__` key is an own
//                property and pollutes nothing).
// A body that is not valid JSON is text: its first 200 characters (after trimming) are the title
// and the whole body the description; a blank body takes the `title` query parameter instead. Valid
// JSON that is not an object (an array, a string, a number, null) has none of the table's fields:
// only the `title` query parameter can name it. The body is decoded as UTF-8 (invalid bytes become
// U+FFFD, a leading byte-order mark is dropped).

import { createHash } from 'node:crypto';
import type { Issue } from '../../core/api';
import { readQuery, type IncomingWebhook, type WebhookProvider, type WebhookVerdict } from '../provider';
import { constantTimeEqual, presentedToken } from '../secrets';

/** Lengths are in characters (Unicode code points), so a cut never splits one. */
const maxTitleCharacters = 1000;
/** Spec "Limits": the title taken from a non-JSON body. */
const textTitleCharacters = 200;
const maxKeyCharacters = 200;
/** A longer key keeps this many characters, then `~` and 16 hex digits of its sha256. */
const keyHashCharacters = 16;
const maxUrlCharacters = 2048;
const maxPriorityCharacters = 100;
const maxLabels = 100;
const maxLabelCharacters = 200;
/**
 * Deeper bodies are refused: they parse, but JSON.stringify (the run store) and structuredClone
 * overflow the stack on them long before the 2 MB body limit.
 */
const maxBodyDepth = 100;
const generatedKeyPrefix = 'HOOK-';
const noTitleReason = 'ignored: no title';

/**
 * The provider for kind 'webhook'.
 * verifyWebhook: with no secret (undefined or empty) every request is accepted; otherwise the token the
 * request presents (`?token=`, `X-Factory-Token`, `Authorization: Bearer`; see `presentedToken`)
 * must equal the secret, compared in constant time.
 * parseWebhook: the rules at the top of this file. Never throws; answers 'invalid' only for a JSON body
 * nested deeper than 100 levels.
 */
export const genericWebhookProvider: WebhookProvider = {
  verifyWebhook(webhook, trigger) {
    const secret = trigger.webhookSecret;
    if (!secret) return true;
    const token = presentedToken(webhook);
    return token !== undefined && constantTimeEqual(token, secret);
  },
  parseWebhook(webhook) {
    return parseGenericWebhook(webhook);
  },
};

/** The generic payload table applied to one request (see the top of this file). Never throws. */
function parseGenericWebhook(webhook: IncomingWebhook): WebhookVerdict {
  const text = decodeBody(webhook.body);
  const queryTitle = cut(trimmedText(readQuery(webhook, 'title')), maxTitleCharacters);
  const body = parseBody(text);

  // "When the body is not valid JSON, its first 200 characters become the title and the whole body the description."
  if (body.kind === 'text') {
    const title = cut(text.trim(), textTitleCharacters)?.trim() || queryTitle;
    if (!title) return { kind: 'ignored', reason: noTitleReason };
    const issue: Issue = { title, source: 'webhook' };
    if (text.trim()) issue.description = text;
    return withKey(issue, generatedKey(webhook.receivedAt));
  }
  if (body.kind === 'too deep') {
    return { kind: 'invalid', reason: `webhook body is nested deeper than ${maxBodyDepth} levels` };
  }
  if (body.kind === 'not an object') {
    if (!queryTitle) return { kind: 'ignored', reason: noTitleReason };
    return withKey({ title: queryTitle, source: 'webhook' }, generatedKey(webhook.receivedAt));
  }

  const fields = body.value;
  // title: else summary, else the title query parameter; with no title the request is ignored.
  const title =
    cut(trimmedText(ownField(fields, 'title')), maxTitleCharacters) ??
    cut(trimmedText(ownField(fields, 'summary')), maxTitleCharacters) ??
    queryTitle;
  if (!title) return { kind: 'ignored', reason: noTitleReason };
  const issue: Issue = { title, source: 'webhook' };

  // description: else body, else empty (omitted).
  const description = nonBlank(ownField(fields, 'description')) ?? nonBlank(ownField(fields, 'body'));
  if (description !== undefined) issue.description = description;

  // url, priority: no fallbacks.
  const url = trimmedText(ownField(fields, 'url'));
  if (url !== undefined && url.length <= maxUrlCharacters) issue.url = url;
  const priority = cut(textOrNumber(ownField(fields, 'priority')), maxPriorityCharacters);
  if (priority !== undefined) issue.priority = priority;

  // labels: must be an array.
  const labels = labelList(ownField(fields, 'labels'));
  if (labels.length > 0) issue.labels = labels;

  // whole body: every extra field reachable as issue.raw.<field>.
  issue.raw = fields;

  // key: else id, else a generated HOOK-<timestamp>.
  const givenKey = textOrNumber(ownField(fields, 'key')) ?? textOrNumber(ownField(fields, 'id'));
  return withKey(issue, givenKey === undefined ? generatedKey(webhook.receivedAt) : boundedKey(givenKey));
}

type ParsedBody =
  | { kind: 'object'; value: Record<string, unknown> }
  | { kind: 'not an object' }
  | { kind: 'too deep' }
  | { kind: 'text' };

function parseBody(text: string): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'text' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'not an object' };
  if (nestedDeeperThan(value, maxBodyDepth)) return { kind: 'too deep' };
  return { kind: 'object', value: value as Record<string, unknown> };
}

function decodeBody(body: Buffer): string {
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** True when objects and arrays nest more than `limit` levels deep (the top one is level 1). Iterative. */
function nestedDeeperThan(top: object, limit: number): boolean {
  const pending: { value: object; depth: number }[] = [{ value: top, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true;
    for (const child of Object.values(next.value)) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: next.depth + 1 });
    }
  }
  return false;
}

function ownField(fields: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

/** A string trimmed, or undefined when it is not a string or is blank. */
function trimmedText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.trim() || undefined;
}

/** A string with some non-space text, as sent; otherwise undefined. */
function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value : undefined;
}

/** A trimmed non-blank string, or a finite number as JavaScript writes it; otherwise undefined. */
function textOrNumber(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  return trimmedText(value);
}

/** The first `count` characters (code points) of `text`; undefined stays undefined. */
function cut(text: string | undefined, count: number): string | undefined {
  if (text === undefined || text.length <= count) return text;
  let kept = '';
  let taken = 0;
  for (const character of text) {
    if (taken === count) break;
    kept += character;
    taken += 1;
  }
  return kept;
}

function labelList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const labels: string[] = [];
  for (const item of value) {
    if (labels.length === maxLabels) break;
    const label = cut(textOrNumber(item), maxLabelCharacters);
    if (label !== undefined) labels.push(label);
  }
  return labels;
}

/**
 * A given key of at most 200 characters as it is; a longer one cut so it stays distinct: its first
 * 183 characters, `~` and 16 hex digits of the sha256 of the whole key (dedup keeps working).
 */
function boundedKey(key: string): string {
  if (cut(key, maxKeyCharacters) === key) return key;
  const kept = cut(key, maxKeyCharacters - keyHashCharacters - 1)!;
  const digest = createHash('sha256').update(key, 'utf16le').digest('hex').slice(0, keyHashCharacters);
  return `${kept}~${digest}`;
}

let lastGeneratedStamp = -Infinity;
let sameStampCount = 0;

/**
 * `HOOK-<receivedAt>`; a request in the same millisecond as (or, out of order, earlier than) the
 * previous generated key gets `HOOK-<that millisecond>-<n>` instead, so keys made by this process
 * never repeat and never dedup two distinct requests.
 */
function generatedKey(receivedAt: number): string {
  const stamp = Number.isFinite(receivedAt) ? Math.trunc(receivedAt) : Date.now();
  if (stamp > lastGeneratedStamp) {
    lastGeneratedStamp = stamp;
    sameStampCount = 0;
    return `${generatedKeyPrefix}${stamp}`;
  }
  sameStampCount += 1;
  return `${generatedKeyPrefix}${lastGeneratedStamp}-${sameStampCount}`;
}

function withKey(issue: Issue, key: string): WebhookVerdict {
  issue.key = key;
  return { kind: 'issue', issue, key };
}
