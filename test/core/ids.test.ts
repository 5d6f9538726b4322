import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isId, newId, newRunId, randomSecret } from '../../src/core/ids';

const ids = suite('ids');

ids('a new id carries its prefix and 64 random bits', () => {
  const id = newId('pl');
  assert.match(id, /^pl_[0-9a-f]{16}$/);
  assert.ok(isId(id, 'pl'));
  assert.not.ok(isId(id, 'trg'));
});

ids('run ids sort by creation, even within one millisecond', () => {
  const made = Array.from({ length: 200 }, () => newRunId(1_700_000_000_000));
  assert.equal([...made].sort(), made);
  assert.equal(new Set(made).size, made.length);
  assert.ok(made.every((id) => isId(id, 'run')));
});

ids('ids stay distinct and evenly random across refills of the random pool', () => {
  const made = Array.from({ length: 2000 }, () => newId('inb')); // 16,000 bytes: the 4 KiB pool refills several times
  assert.is(new Set(made).size, made.length);
  const counts = new Map<string, number>();
  for (const id of made) for (const digit of id.slice(4)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
  assert.is(counts.size, 16);
  // 32,000 digits: 2,000 expected of each; a bias or a repeated pool would leave this band.
  for (const [digit, count] of counts) assert.ok(count > 1700 && count < 2300, `${digit} appears ${count} times`);
});

ids('refuses values that could leave a folder or are not ids', () => {
  for (const bad of ['run_../../etc', 'run_', '', 'pl_ABCDEF0123456789', 'pl_0123456789abcdef/..', null, 42]) {
    assert.not.ok(isId(bad, 'run') || isId(bad, 'pl'), String(bad));
  }
});

ids('secrets are base64url of the asked length', () => {
  const secret = randomSecret(32);
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  assert.not.equal(randomSecret(32), secret);
});

ids.run();
