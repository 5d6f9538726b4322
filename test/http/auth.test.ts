// Remote access authentication as a unit: how the access token is compared, which Host names are
// allowed, and which sessions are kept. The end-to-end matrix is in remote.test.ts.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RemoteAuth, isAllowedHost, maxSessions, sessionCookieName, type RemoteState } from '../../src/http/auth';

const require = createRequire(import.meta.url);
const crypto = require('node:crypto') as typeof import('node:crypto');

function request(headers: Record<string, string>, method = 'GET'): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

async function openAuth(now: () => number = Date.now): Promise<{ auth: RemoteAuth; saved: () => RemoteState | undefined }> {
  let saved: RemoteState | undefined;
  const auth = await RemoteAuth.open({ load: async () => saved, save: async (state) => void (saved = state) }, now);
  return { auth, saved: () => saved };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Replaces node:crypto's timingSafeEqual, for the ES module bindings too (syncBuiltinESMExports),
 * with one that records its arguments and then compares as the real one does.
 */
async function withComparisonsSeen<T>(body: (seen: [Buffer, Buffer][]) => Promise<T>): Promise<T> {
  const real = crypto.timingSafeEqual;
  const seen: [Buffer, Buffer][] = [];
  crypto.timingSafeEqual = ((a: Buffer, b: Buffer) => {
    seen.push([Buffer.from(a), Buffer.from(b)]);
    return real(a, b);
  }) as typeof real;
  syncBuiltinESMExports();
  try {
    return await body(seen);
  } finally {
    crypto.timingSafeEqual = real;
    syncBuiltinESMExports();
  }
}

const token = suite('remote access token');

// What this can prove: every presented token, right or wrong, of any length, is judged by one
// timingSafeEqual over the two sha256 digests, and nothing else decides first (`===`, a length
// check, a prefix test all skip the call for some of these tokens, or answer without it). What it
// cannot prove: that the comparison takes the same time; that is timingSafeEqual's promise.
token('every presented token is judged by timingSafeEqual over two sha256 digests, right or wrong, any length', async () => {
  const { auth } = await openAuth();
  const real = auth.token;
  const lastChanged = real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A');
  const presented = [real, lastChanged, 'x', real + 'x', real.slice(0, -1), 'x'.repeat(6000), ' ' + real];
  await withComparisonsSeen(async (seen) => {
    for (const candidate of presented) {
      seen.length = 0;
      const result = auth.authenticate(request({ authorization: `Bearer ${candidate}` }));
      assert.equal(result.ok, candidate === real || candidate === ' ' + real, `Bearer ${candidate.slice(0, 50)}`);
      assert.is(seen.length, 1, `one constant-time comparison for a token of ${candidate.length} characters`);
      const [left, right] = seen[0]!;
      assert.equal([left.length, right.length], [32, 32], 'both sides are digests of 32 bytes');
      assert.ok(left.equals(sha256(candidate.trim())) && right.equals(sha256(real)), 'the digests of what was presented and of the token');
    }
    seen.length = 0;
    assert.is(await auth.signIn(lastChanged), undefined, 'the sign-in link with a near miss');
    assert.ok(seen.some(([left, right]) => left.equals(sha256(lastChanged)) && right.equals(sha256(real))), 'the sign-in link is judged the same way');
    seen.length = 0;
    assert.ok(await auth.signIn(real));
    assert.ok(seen.some(([left, right]) => left.equals(sha256(real)) && right.equals(sha256(real))), 'the right token too');
  });
});

token('a token that differs only in its last character is refused, at the door and at sign-in', async () => {
  const { auth } = await openAuth();
  const real = auth.token;
  for (const last of ['A', 'B', '-', '_', '0']) {
    const near = real.slice(0, -1) + last;
    if (near === real) continue;
    assert.equal(auth.authenticate(request({ authorization: `Bearer ${near}` })), { ok: false, reason: 'bad token' });
    assert.is(await auth.signIn(near), undefined);
  }
  assert.equal(auth.authenticate(request({ authorization: `Bearer ${real}` })), { ok: true, by: 'bearer' });
});

token.run();

const hosts = suite('allowed hosts');

hosts('a Host is allowed only when it names an allowed host exactly, in any letter case, with any port', () => {
  const allowed = ['factory.example.com', 'Tunnel.Example.NET'];
  const accepted = [
    'factory.example.com', 'FACTORY.Example.COM', 'factory.example.com:8443', 'tunnel.example.net', 'TUNNEL.example.net:443',
    '127.0.0.1', '127.0.0.1:3000', '192.168.1.20:8080', '[::1]:3000', 'localhost', 'LOCALHOST:80',
  ];
  const refused = [
    'evilfactory.example.com', 'factory.example.com.evil.com', 'sub.factory.example.com', 'factory.example.co', 'actory.example.com',
    'factory.example.com.', 'evil.com:factory.example.com', 'factory.example.com@evil.com', 'evil.com', 'localhost.evil.com',
    '127.0.0.1.nip.io', 'tunnel.example.net.evil.com', '', ' ',
  ];
  for (const host of accepted) assert.ok(isAllowedHost(host, allowed), `${host} is allowed`);
  for (const host of refused) assert.not.ok(isAllowedHost(host, allowed), `${host} is refused`);
  assert.not.ok(isAllowedHost(undefined, allowed), 'no Host at all');
  assert.not.ok(isAllowedHost('factory.example.com', []), 'a name nobody allowed');
});

hosts.run();

const sessions = suite('sessions');

sessions(`the ${maxSessions + 1}st sign-in ends the oldest session, not the newest`, async () => {
  let now = 1_000_000;
  const { auth, saved } = await openAuth(() => now);
  const cookies: string[] = [];
  for (let index = 0; index <= maxSessions; index++) {
    now += 1;
    cookies.push((await auth.signIn(auth.token))!);
  }
  const signedIn = (sessionId: string) => auth.authenticate(request({ cookie: `${sessionCookieName}=${sessionId}` })).ok;
  assert.is(saved()!.sessions.length, maxSessions, 'remote.json keeps the most');
  assert.not.ok(signedIn(cookies[0]!), 'the oldest session has ended');
  assert.ok(signedIn(cookies[1]!), 'the second oldest is still signed in');
  assert.ok(signedIn(cookies[maxSessions]!), 'the newest is signed in');
  assert.equal(saved()!.sessions.map((session) => session.createdAt), Array.from({ length: maxSessions }, (_, index) => 1_000_002 + index), 'the newest ones, oldest first');
});

sessions.run();
