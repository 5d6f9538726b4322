// The one outbound HTTP client: notification channels and tracker providers send every request
// through `httpRequest`. It bounds each exchange (a timeout for the whole answer, a cap on the
// answer's size, the caller's abort signal), reads `Retry-After`, and keeps secrets out of what it
// reports: URLs in errors are redacted, and the caller's secrets and the credentials of the
// request's `Authorization` header are scrubbed, in every form they travel in, from every error and
// from the answer itself. A service (or a proxy in front of it) that echoes the request in its
// error body therefore cannot put a token into an error a provider builds from that body.

import { FactoryError, errorMessage } from '../core/errors';

interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, answer body included, ends after this long (default 10 s). */
  timeoutMs?: number;
  /** Answer bytes read at most (default 16 MiB); see `cutAnswer`. */
  maxBytes?: number;
  /** true: an answer over `maxBytes` is cut there; false (default): it is an error. */
  cutAnswer?: boolean;
  /** Words naming the service in errors, e.g. `Linear` (default: the redacted URL's host). */
  service?: string;
  /**
   * Texts never to appear in an error or in the answer (tokens, keys, secret URLs); the
   * credentials of the `Authorization` header are always added (see `credentialsOf`).
   */
  secrets?: readonly string[];
  /** Ends the exchange early (Factory is stopping): it rejects with NetworkError. */
  signal?: AbortSignal;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

interface HttpOptions {
  fetch?: typeof fetch;
}

/**
 * The request never got an HTTP answer (refused, unreachable, timed out, too large). Retryable.
 * Its message is words first ("Couldn't reach Jira at 127.0.0.1:45413 (connection refused)"),
 * then, when there is more to say, a line beginning `Details: ` with the method, the redacted URL
 * and the exact error: screens show the first line and keep the rest behind a disclosure.
 */
export class NetworkError extends FactoryError {
  override name = 'NetworkError';
  readonly retryable = true;
  /** The words alone (the message's first line). */
  readonly summary: string;
  /** The method, redacted URL and exact error; empty when the words say it all. */
  readonly details: string;

  constructor(summary: string, details = '') {
    super(details ? `${summary}${detailsSeparator}${details}` : summary);
    this.summary = summary;
    this.details = details;
  }
}

/** Between an error's words and its details (see NetworkError); the renderer splits on it. */
export const detailsSeparator = '\nDetails: ';

const defaultTimeoutMs = 10_000;
const defaultMaxBytes = 16 * 1024 * 1024;
const redacted = '***';

/**
 * Sends one request and reads its answer within the timeout. Any HTTP status resolves (the caller
 * reads it in the service's own terms); redirects are not followed (a POST must not become a GET).
 * The answer's text and header values come without the request's secrets (each replaced by `***`).
 * Rejects with NetworkError: words naming the service and its host:port, then the redacted URL and
 * the exact error as details (see NetworkError), never a secret.
 */
export async function httpRequest(request: OutboundRequest, options: HttpOptions = {}): Promise<HttpAnswer> {
  const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
  const where = redactUrl(request.url);
  const host = hostOf(where);
  const service = request.service ?? host;
  const secrets = [...(request.secrets ?? []), ...credentialsOf(request.headers)];
  const exchange = `${request.method ?? 'GET'} ${where}`;
  const fail = (summary: string, details = '') => new NetworkError(scrub(summary, secrets), scrub(details, secrets));
  try {
    const response = await (options.fetch ?? fetch)(request.url, {
      method: request.method ?? 'GET',
      headers: { 'User-Agent': 'Factory', ...request.headers },
      ...(request.body !== undefined ? { body: request.body } : {}),
      redirect: 'manual',
      signal: request.signal ? AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
    });
    const text = await readText(response, request.maxBytes ?? defaultMaxBytes, request.cutAnswer ?? false);
    if (text === undefined) throw fail(`${service} answered more than ${formatBytes(request.maxBytes ?? defaultMaxBytes)}; the answer was dropped`);
    return { status: response.status, headers: scrubHeaders(response.headers, secrets), text: scrub(text, secrets) };
  } catch (error) {
    if (error instanceof NetworkError) throw error;
    if (request.signal?.aborted) throw fail(`The request to ${service} was cancelled: Factory is stopping`);
    if (isTimeout(error)) throw fail(`${request.service ? `${service} at ${host}` : host} did not answer within ${Number((timeoutMs / 1000).toFixed(3))} s`, exchange);
    throw fail(`Couldn't reach ${request.service ? `${service} at ${host}` : host} (${networkReason(error)})`, `${exchange}: ${exactError(error)}`);
  }
}

/** `host:port` of a (redacted) URL, as people say where a service is; the text itself when it is no URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The error as Node said it, with its cause ("fetch failed: connect ECONNREFUSED 127.0.0.1:45413"). */
function exactError(error: unknown): string {
  const text = errorMessage(error);
  const cause = error instanceof Error && error.cause !== undefined ? errorMessage(error.cause) : '';
  return cause && cause !== text ? `${text}: ${cause}` : text;
}

/** The body as UTF-8 text: cut at `maxBytes`, or undefined when it is larger and may not be cut. */
async function readText(response: Response, maxBytes: number, cut: boolean): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      if (!cut) return undefined;
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Number((bytes / 1024 / 1024).toFixed(1))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || (error.cause instanceof Error && error.cause.name === 'TimeoutError'));
}

const networkReasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'the connection closed early',
};

function networkReason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && networkReasons[code]) return networkReasons[code];
  return errorMessage(cause);
}

/**
 * How long `Retry-After` (seconds, or an HTTP date) asks to wait, in milliseconds from `now`;
 * undefined when the header is absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const header = headers.get('retry-after')?.trim();
  if (!header) return undefined;
  if (/^\d+(\.\d+)?$/.test(header)) return Math.ceil(Number(header) * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

// ─── Secrets ───

/** Query parameters whose values are secrets. */
const secretQueryNames = /^(token|access_token|auth|key|api_key|apikey|secret|sig|signature|password)$/i;
/** A path segment that looks like a generated secret: 16+ letters, digits, `-` or `_`, with a digit. */
const secretSegment = /^(?=.*\d)[A-Za-z0-9_-]{16,}$/;

/**
 * `url` safe to show: Slack's `/services/…` and `/triggers/…` path, Discord's `/webhooks/<id>/<token>`,
 * Telegram's `/bot<token>`, user info, secret query values (`token=` and the like) and any path
 * segment that looks like a generated secret are replaced by `***`. Not a URL: `(an invalid URL)`.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(an invalid URL)';
  }
  if (parsed.username || parsed.password) {
    parsed.username = redacted;
    parsed.password = '';
  }
  const segments = parsed.pathname.split('/');
  const output: string[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if ((segment === 'services' || segment === 'triggers' || segment === 'webhooks') && index < segments.length - 1) {
      output.push(segment, redacted);
      break;
    }
    if (/^bot.+/.test(segment)) output.push(`bot${redacted}`);
    else output.push(secretSegment.test(segment) ? redacted : segment);
  }
  parsed.pathname = output.join('/');
  for (const name of [...parsed.searchParams.keys()]) {
    if (secretQueryNames.test(name)) parsed.searchParams.set(name, redacted);
  }
  return parsed.href.replace(/%2A%2A%2A/g, redacted);
}

/** Every part of `url` that `redactUrl` hides (user info, secret path segments, secret query values). */
export function secretsOfUrl(url: string): string[] {
  try {
    const parsed = new URL(url);
    const shownSegments = new Set(new URL(redactUrl(url)).pathname.split('/'));
    const secrets = [parsed.username, parsed.password, ...parsed.pathname.split('/').filter((segment) => !shownSegments.has(segment))];
    for (const [name, value] of parsed.searchParams) if (secretQueryNames.test(name)) secrets.push(value);
    return secrets;
  } catch {
    return [url];
  }
}

/**
 * The secrets an `Authorization` header carries: the whole value when it is a bare key (Linear's), the
 * credentials after the scheme (`Bearer x`, `token x`), and for `Basic` (base64 of `user:password`)
 * the password. The user name is not a secret (often an email, shown beside the account).
 */
export function credentialsOf(headers: Record<string, string> | undefined): string[] {
  const value = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1]?.trim();
  if (!value) return [];
  const [scheme, credentials] = value.split(/\s+/, 2);
  if (credentials === undefined) return [value];
  if (!/^basic$/i.test(scheme!)) return [credentials];
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  return [credentials, decoded.slice(decoded.indexOf(':') + 1)];
}

/**
 * Each form a secret travels or is echoed in: as it is, URL-encoded (upper- and lower-case hex),
 * base64 (padded or not), base64url and JSON-escaped. `Bearer x` and `token x` hold the raw form;
 * Basic's base64 of `email:token` is a secret of its own (see `credentialsOf`).
 */
function secretForms(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  const base64 = Buffer.from(secret).toString('base64');
  const json = JSON.stringify(secret).slice(1, -1);
  return [secret, encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), base64, base64.replace(/=+$/, ''), Buffer.from(secret).toString('base64url'), json, json.replaceAll('/', '\\/')];
}

/** Removes each secret (of 4 characters or more), in each of its forms (`secretForms`), longest first, from `text`. */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  const forms = new Set(secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4).flatMap(secretForms));
  let clean = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) if (clean.includes(form)) clean = clean.split(form).join(redacted);
  return clean;
}

/** `headers`, or a copy with the secrets scrubbed from their values when some value holds one. */
function scrubHeaders(headers: Headers, secrets: readonly string[]): Headers {
  let clean: Headers | undefined;
  for (const [name, value] of headers) {
    const scrubbed = scrub(value, secrets);
    if (scrubbed === value) continue;
    clean ??= new Headers(headers);
    clean.set(name, scrubbed);
  }
  return clean ?? headers;
}
