// Remote access authentication (spec "Authentication/Remote access", DESIGN §4):
// an access token (32 random bytes, base64url) shown in the sign-in link, and the sessions
// created by that link. Only hashes of session ids are stored, so remote.json alone opens nothing.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** What remote.json holds. */
export interface RemoteState {
  token: string;
  /** sha256 (hex) of each signed-in session id, with when it was made. */
  sessions: { hash: string; createdAt: number }[];
}

interface RemoteStatePort {
  load(): Promise<RemoteState | undefined>;
  /** Durable (atomic, mode 0600). */
  save(state: RemoteState): Promise<void>;
}

export const sessionCookieName = 'factory_session';
/** Sessions kept at most: a new one beyond this ends the oldest. */
export const maxSessions = 200;
/** How long a one-time sign-in link (`createInvite`) works. */
export const inviteLifetimeMs = 10 * 60_000;
/** Live invites kept at most: the oldest goes first. */
const maxInvites = 20;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Compares a presented secret with the real one in constant time, for any length of either: both
 * are hashed first, so `timingSafeEqual` always sees two 32-byte digests (it throws on unequal
 * lengths), and neither the length nor the content leaks through timing.
 */
function secretsEqual(presented: string, secret: string): boolean {
  if (!secret) return false;
  return timingSafeEqual(sha256(presented), sha256(secret));
}

function newAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The value of one cookie in a Cookie header, or undefined. */
function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/** The Host header's name without the port, lower-cased; IPv6 literals without brackets. */
export function hostName(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end > 0 ? host.slice(1, end) : undefined;
  }
  const colon = host.indexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

/** A name only this machine reaches: localhost, 127.0.0.0/8, ::1 (a phone cannot open a link to it). */
export function isLoopbackHost(name: string): boolean {
  return name === 'localhost' || name === '::1' || /^127\./.test(name);
}

/**
 * DNS-rebinding defence: a request must name this server by an IP literal, `localhost`, or a
 * host name the user allowed in settings (a tunnel's address).
 */
export function isAllowedHost(hostHeader: string | undefined, allowedHosts: readonly string[]): boolean {
  const name = hostName(hostHeader);
  if (!name) return false;
  if (isIP(name) !== 0 || name === 'localhost') return true;
  return allowedHosts.some((allowed) => allowed.toLowerCase() === name);
}

/**
 * A cookie-authenticated request must come from our own origin: cookies are shared across ports
 * of one host, so another local site could otherwise ride on them. A request that states its
 * origin (Origin or Sec-Fetch-Site) must state ours; a POST must state it.
 */
function isSameOrigin(request: IncomingMessage): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return request.method === 'GET' || request.method === 'HEAD';
  const host = request.headers.host;
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
}

export type Authentication = { ok: true; by: 'bearer' | 'cookie' } | { ok: false; reason: string };

export class RemoteAuth {
  /**
   * One-time sign-in codes (sha256 hex → expiry time), in memory only: an invite lives ten minutes,
   * so a restart losing them costs one new link, and remote.json never holds a usable code.
   */
  private readonly invites = new Map<string, number>();

  private constructor(private state: RemoteState, private readonly port: RemoteStatePort, private readonly now: () => number) {}

  /** Loads remote.json, or makes a first token and writes it. */
  static async open(port: RemoteStatePort, now: () => number = Date.now): Promise<RemoteAuth> {
    let state = await port.load();
    if (!state || typeof state.token !== 'string' || state.token.length < 32 || !Array.isArray(state.sessions)) {
      state = { token: newAccessToken(), sessions: [] };
      await port.save(state);
    }
    return new RemoteAuth(state, port, now);
  }

  get token(): string {
    return this.state.token;
  }

  /** Checks a request: a Bearer token, or a session cookie from our own origin. */
  authenticate(request: IncomingMessage): Authentication {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
      if (match && this.isAccessToken(match[1]!)) return { ok: true, by: 'bearer' };
      return { ok: false, reason: 'bad token' };
    }
    const cookie = readCookie(request.headers.cookie, sessionCookieName);
    if (cookie === undefined) return { ok: false, reason: 'no session' };
    if (!this.hasSession(cookie)) return { ok: false, reason: 'unknown session' };
    if (!isSameOrigin(request)) return { ok: false, reason: 'foreign origin' };
    return { ok: true, by: 'cookie' };
  }

  /** The one place a presented access token is judged: `secretsEqual`, in constant time. */
  private isAccessToken(presented: string): boolean {
    return secretsEqual(presented, this.state.token);
  }

  private hasSession(sessionId: string): boolean {
    const hash = sha256(sessionId).toString('hex');
    return this.state.sessions.some((session) => session.hash === hash);
  }

  /**
   * A new one-time sign-in code: `signIn` takes it once, within `inviteLifetimeMs`, and makes a
   * session as the access token does. It is not the access token, so a link shown in a browser
   * never reveals what signs in for good.
   */
  createInvite(): string {
    const code = newAccessToken();
    for (const [hash, expires] of this.invites) if (expires <= this.now() || this.invites.size >= maxInvites) this.invites.delete(hash);
    this.invites.set(sha256(code).toString('hex'), this.now() + inviteLifetimeMs);
    return code;
  }

  /** True (and the invite is gone) when `code` is a live invite. */
  private useInvite(code: string): boolean {
    const hash = sha256(code).toString('hex');
    const expires = this.invites.get(hash);
    this.invites.delete(hash);
    return expires !== undefined && expires > this.now();
  }

  /** Makes a session for the access token or a live invite; returns its id (the cookie value), or undefined. */
  async signIn(presentedToken: string): Promise<string | undefined> {
    if (!this.isAccessToken(presentedToken) && !this.useInvite(presentedToken)) return undefined;
    const sessionId = randomBytes(32).toString('base64url');
    const sessions = [...this.state.sessions, { hash: sha256(sessionId).toString('hex'), createdAt: this.now() }].slice(-maxSessions);
    const next = { ...this.state, sessions };
    await this.port.save(next);
    this.state = next;
    return sessionId;
  }

  /** A new token; every session and invite ends. */
  async reset(): Promise<void> {
    this.invites.clear();
    const next = { token: newAccessToken(), sessions: [] };
    await this.port.save(next);
    this.state = next;
  }
}

/** The Set-Cookie value for a new session (DESIGN §4: HttpOnly, SameSite, Path=/, no Domain). */
export function sessionCookie(sessionId: string): string {
  return `${sessionCookieName}=${sessionId}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000`;
}
