import { createHmac } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readHeader, readQuery } from '../../src/triggers/provider';
import { constantTimeEqual, presentedToken, verifyGithubSignature, verifyHmacSha256Hex } from '../../src/triggers/secrets';

const secrets = suite('secrets');

const secret = 'whsec_0123456789abcdef';
const rawBody = Buffer.from('{"action":"create","data":{"title":"Fix the build"}}', 'utf8');
/** The known vector, computed independently of the code under test. */
const expectedHex = createHmac('sha256', secret).update(rawBody).digest('hex');

function request(headers: Record<string, string | undefined> = {}, query: Record<string, string> = {}) {
  return { headers, query };
}

secrets('constantTimeEqual answers plain equality for any lengths', () => {
  assert.ok(constantTimeEqual('s3cret', 's3cret'));
  assert.not.ok(constantTimeEqual('s3cret', 's3creT'));
  assert.not.ok(constantTimeEqual('s3cret', 's3cret '));
  assert.not.ok(constantTimeEqual('', 's3cret'));
  assert.not.ok(constantTimeEqual('x'.repeat(1_000_000), 's3cret'));
  assert.ok(constantTimeEqual('', ''));
});

secrets('constantTimeEqual tells lone surrogates apart (no UTF-8 replacement collisions)', () => {
  assert.not.ok(constantTimeEqual('\uD800', '\uDBFF'));
  assert.not.ok(constantTimeEqual('\uD800', '\uFFFD'));
  assert.ok(constantTimeEqual('ключ🔑', 'ключ🔑'));
});

secrets('accepts the HMAC-SHA256 of the raw body, in either letter case', () => {
  assert.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex));
  assert.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex.toUpperCase()));
  assert.ok(verifyHmacSha256Hex(rawBody, secret, ` ${expectedHex} `));
});

secrets('signs the raw bytes, not re-encoded JSON', () => {
  const reencoded = Buffer.from(JSON.stringify(JSON.parse(rawBody.toString('utf8')), null, 1));
  assert.not.ok(verifyHmacSha256Hex(reencoded, secret, expectedHex));
  const invalidUtf8 = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  assert.ok(verifyHmacSha256Hex(invalidUtf8, secret, createHmac('sha256', secret).update(invalidUtf8).digest('hex')));
});

secrets('rejects a signature made with another secret or over another body', () => {
  assert.not.ok(verifyHmacSha256Hex(rawBody, 'other-secret', expectedHex));
  assert.not.ok(verifyHmacSha256Hex(Buffer.concat([rawBody, Buffer.from(' ')]), secret, expectedHex));
  const flipped = (expectedHex[0] === '0' ? '1' : '0') + expectedHex.slice(1);
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, flipped));
});

secrets('rejects a signature of the wrong length without throwing', () => {
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex.slice(0, 63)));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex + '0'));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex + expectedHex));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex.slice(0, 32)));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, 'f'.repeat(100_000)));
});

secrets('rejects a signature that is not hex', () => {
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, 'g' + expectedHex.slice(1)));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex.slice(0, 62) + 'é1'));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, Buffer.from(expectedHex, 'hex').toString('base64')));
  // Node's hex decoder stops at the first bad pair; the pattern check must catch it first.
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, expectedHex.slice(0, 62) + 'zz'));
});

secrets('rejects a missing signature and an empty secret', () => {
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, undefined));
  assert.not.ok(verifyHmacSha256Hex(rawBody, secret, ''));
  const emptyKeyHex = createHmac('sha256', '').update(rawBody).digest('hex');
  assert.not.ok(verifyHmacSha256Hex(rawBody, '', emptyKeyHex));
});

secrets('verifies the code host header sha256=<hex>', () => {
  assert.ok(verifyGithubSignature(rawBody, secret, `sha256=${expectedHex}`));
  assert.not.ok(verifyGithubSignature(rawBody, secret, expectedHex));
  assert.not.ok(verifyGithubSignature(rawBody, secret, `sha1=${expectedHex}`));
  assert.not.ok(verifyGithubSignature(rawBody, secret, 'sha256='));
  assert.not.ok(verifyGithubSignature(rawBody, secret, `sha256=${expectedHex.slice(2)}`));
  assert.not.ok(verifyGithubSignature(rawBody, secret, undefined));
  assert.not.ok(verifyGithubSignature(rawBody, 'other-secret', `sha256=${expectedHex}`));
});

secrets('presentedToken reads ?token=, then X-Factory-Token, then Authorization: Bearer', () => {
  assert.is(presentedToken(request({}, { token: 'from-query' })), 'from-query');
  assert.is(presentedToken(request({ 'x-factory-token': 'from-header' })), 'from-header');
  assert.is(presentedToken(request({ authorization: 'Bearer from-bearer' })), 'from-bearer');
  const all = request({ 'x-factory-token': 'from-header', authorization: 'Bearer from-bearer' }, { token: 'from-query' });
  assert.is(presentedToken(all), 'from-query');
  assert.is(presentedToken(request({ 'x-factory-token': 'from-header', authorization: 'Bearer from-bearer' })), 'from-header');
});

secrets('presentedToken skips empty values and other authorization schemes', () => {
  assert.is(presentedToken(request({ 'x-factory-token': 'from-header' }, { token: '' })), 'from-header');
  assert.is(presentedToken(request({ 'x-factory-token': '', authorization: 'Bearer b' })), 'b');
  assert.is(presentedToken(request({ authorization: 'Bearer ' })), undefined);
  assert.is(presentedToken(request({ authorization: 'Bearer' })), undefined);
  assert.is(presentedToken(request({ authorization: 'Basic dXNlcjpwYXNz' })), undefined);
  assert.is(presentedToken(request({ authorization: 'Bearertoken' })), undefined);
  assert.is(presentedToken(request({ authorization: 'bearer   spaced  ' })), 'spaced');
  assert.is(presentedToken(request()), undefined);
});

secrets('headers are found in any letter case, and only as own properties', () => {
  assert.is(presentedToken(request({ 'X-Factory-Token': 'mixed' })), 'mixed');
  assert.is(readHeader(request({ 'Content-Type': 'text/plain' }), 'content-type'), 'text/plain');
  assert.is(readHeader(request(), 'constructor'), undefined);
  assert.is(readQuery(request(), 'toString'), undefined);
  assert.is(readQuery(request({}, JSON.parse('{"__proto__":"x"}') as Record<string, string>), '__proto__'), 'x');
});

secrets.run();
