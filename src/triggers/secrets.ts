// Webhook secrets and signatures (spec "Authentication/Webhook server"): shared tokens compared in
// constant time, and HMAC-SHA256 signatures computed over the raw body bytes. Every check here runs
// before the body is parsed, answers true or false and never throws.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readHeader, readQuery, type IncomingWebhook } from './provider';

/** Bytes in an HMAC-SHA256 digest; its hex form has twice as many digits. */
const sha256DigestBytes = 32;
const sha256HexPattern = /^[0-9a-fA-F]{64}$/;
/** The prefix of the code host's `X-Hub-Signature-256` header. */
const githubSignaturePrefix = 'sha256=';

function sha256OfText(text: string): Buffer {
  // UTF-16 code units, so two strings hash alike only when they are the same string (UTF-8 would
  // turn every lone surrogate into the same replacement character).
  return createHash('sha256').update(text, 'utf16le').digest();
}

/**
 * True when `presented` is exactly `secret`, compared in constant time for any length of either:
 * both are hashed first, so `timingSafeEqual` always sees two 32-byte digests (it throws on unequal
 * lengths) and neither length nor content leaks through timing. Plain equality: two empty strings
 * are equal, so callers decide first what an empty secret means.
 */
export function constantTimeEqual(presented: string, secret: string): boolean {
  return timingSafeEqual(sha256OfText(presented), sha256OfText(secret));
}

/**
 * True when `presentedHex` is the hex HMAC-SHA256 of `rawBody` under `secret` (either letter case,
 * surrounding whitespace allowed). A missing value, a value that is not exactly 64 hex digits, or an
 * empty secret (a signature under an empty key proves nothing; callers skip verification when no
 * secret is set) answer false before anything is compared; the digests are compared in constant time.
 */
export function verifyHmacSha256Hex(rawBody: Buffer, secret: string, presentedHex: string | undefined): boolean {
  if (!secret || typeof presentedHex !== 'string') return false;
  const hex = presentedHex.trim();
  if (hex.length !== sha256DigestBytes * 2 || !sha256HexPattern.test(hex)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const presented = Buffer.from(hex, 'hex');
  // timingSafeEqual throws on unequal lengths: compare them first (they match by construction).
  if (presented.length !== expected.length) return false;
  return timingSafeEqual(presented, expected);
}

/**
 * True when `header` is the code host's `X-Hub-Signature-256` value for `rawBody`: `sha256=`
 * (lower case, as the platform sends it) followed by the hex HMAC-SHA256 of the raw body.
 */
export function verifyGithubSignature(rawBody: Buffer, secret: string, header: string | undefined): boolean {
  if (typeof header !== 'string') return false;
  const value = header.trim();
  if (!value.startsWith(githubSignaturePrefix)) return false;
  return verifyHmacSha256Hex(rawBody, secret, value.slice(githubSignaturePrefix.length));
}

/**
 * The shared token a request presents, or undefined. The spec's three ways, in this order of
 * precedence; the first one that is present and not empty wins, and the others are not consulted:
 * 1. the query parameter `?token=<secret>`;
 * 2. the header `X-Factory-Token: <secret>`;
 * 3. the header `Authorization: Bearer <secret>` (scheme in any letter case, token trimmed).
 */
export function presentedToken(webhook: Pick<IncomingWebhook, 'headers' | 'query'>): string | undefined {
  const queryToken = readQuery(webhook, 'token');
  if (queryToken) return queryToken;
  const headerToken = readHeader(webhook, 'x-factory-token');
  if (headerToken) return headerToken;
  return bearerToken(readHeader(webhook, 'authorization'));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other value. */
function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const value = authorization.trim();
  const scheme = 'bearer';
  if (value.slice(0, scheme.length).toLowerCase() !== scheme) return undefined;
  const separator = value.charAt(scheme.length);
  if (separator !== ' ' && separator !== '\t') return undefined;
  const token = value.slice(scheme.length + 1).trim();
  return token || undefined;
}
