// LineSplitter and OutputTail: bytes in, clean lines and a bounded output tail out.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LineSplitter, OutputTail } from '../../src/engine/lines';

/** Feeds `chunks` to a new splitter, ends it, and returns every line it delivered. */
function splitAll(chunks: (string | Uint8Array)[], maxLineLength?: number): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), maxLineLength);
  for (const chunk of chunks) splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  splitter.end();
  return lines;
}

/** Every byte of `text` as its own chunk: the harshest way to cut a stream. */
function byteByByte(text: string): Uint8Array[] {
  return [...Buffer.from(text)].map((byte) => Uint8Array.of(byte));
}

const lines = suite('lines');

lines('splits on line feeds, keeps empty lines and delivers a last line without a line feed on end', () => {
  assert.equal(splitAll(['one\ntwo\n\nthr', 'ee\nfour']), ['one', 'two', '', 'three', 'four']);
  assert.equal(splitAll(['only\n']), ['only']);
  assert.equal(splitAll([]), []);
});

lines('removes the carriage return of Windows line endings, even when a chunk ends between \\r and \\n', () => {
  assert.equal(splitAll(['one\r\ntwo\r', '\nthree\r\n']), ['one', 'two', 'three']);
});

lines('decodes a multi-byte character cut across chunks', () => {
  const text = 'grüße 日本語 🎉\nnext ✓\n';
  assert.equal(splitAll(byteByByte(text)), ['grüße 日本語 🎉', 'next ✓']);
});

lines('turns invalid UTF-8 into replacement characters instead of failing', () => {
  const bytes = Uint8Array.of(0x61, 0xff, 0xfe, 0x62, 0x0a, 0xe2, 0x82); // a, two invalid bytes, b; then a cut-off €
  assert.equal(splitAll([bytes]), ['a\uFFFD\uFFFDb', '\uFFFD']);
});

lines('strips NUL and other control characters but keeps tabs and ANSI colour escapes', () => {
  const input = 'a\x00b\x07c\td\x1b[31mred\x1b[0m\x7fe\x08\rf\n';
  assert.equal(splitAll([input]), ['abc\td\x1b[31mred\x1b[0m\x7fef']);
});

lines('delivers an over-long line in pieces of at most maxLineLength whose concatenation is the line', () => {
  const line = 'abcdefghij'.repeat(25); // 250 characters
  for (const chunks of [[line + '\nafter\n'], byteByByte(line + '\nafter\n')]) {
    const delivered = splitAll(chunks, 16);
    const pieces = delivered.slice(0, -1);
    assert.ok(pieces.every((piece) => piece.length <= 16 && piece.length > 0), 'every piece fits');
    assert.is(pieces.join(''), line);
    assert.is(delivered.at(-1), 'after');
  }
});

lines('a line of exactly a multiple of maxLineLength gives no empty extra piece', () => {
  assert.equal(splitAll(['aaaabbbb\nc\n'], 4), ['aaaa', 'bbbb', 'c']);
  assert.equal(splitAll(['aaaa', 'bbbb', '\n', 'c'], 4), ['aaaa', 'bbbb', 'c']);
  assert.equal(splitAll(['aaaa\r', '\n'], 4), ['aaaa']);
});

lines('never splits a surrogate pair between two pieces', () => {
  const delivered = splitAll(['abc🎉def\n'], 4); // the emoji is two UTF-16 code units at index 3 and 4
  assert.equal(delivered, ['abc', '🎉de', 'f']);
});

lines('a 200 MB line without a line feed is delivered while it streams, holding at most maxLineLength', () => {
  const chunk = Buffer.alloc(65_536, 'x');
  const maxLineLength = 16_384;
  let deliveredLength = 0;
  let longestPiece = 0;
  const splitter = new LineSplitter((line) => {
    deliveredLength += line.length;
    longestPiece = Math.max(longestPiece, line.length);
  }, maxLineLength);
  let pushedLength = 0;
  let largestBacklog = 0;
  for (let index = 0; index < 3200; index += 1) {
    splitter.push(chunk);
    pushedLength += chunk.length;
    largestBacklog = Math.max(largestBacklog, pushedLength - deliveredLength);
  }
  splitter.end();
  assert.is(pushedLength, 209_715_200);
  assert.is(deliveredLength, pushedLength, 'everything arrives');
  assert.ok(largestBacklog <= maxLineLength, `held back ${largestBacklog} characters`);
  assert.is(longestPiece, maxLineLength);
});

lines('refuses a maxLineLength below 2 and a push after end', () => {
  assert.throws(() => new LineSplitter(() => {}, 1), /maxLineLength must be an integer of at least 2, got 1/);
  assert.throws(() => new LineSplitter(() => {}, 2.5), /got 2\.5/);
  const splitter = new LineSplitter(() => {});
  splitter.end();
  assert.throws(() => splitter.push(Buffer.from('late')), /after end/);
});

lines.run();

const tail = suite('OutputTail');

tail('keeps everything when the output is within the limit', () => {
  const kept = new OutputTail(100);
  kept.push(Buffer.from('hello '));
  kept.push(Buffer.from('wörld'));
  assert.is(kept.text(), 'hello wörld');
  assert.is(kept.truncated, false);
  assert.is(kept.totalBytes, 12);
});

tail('keeps exactly the last limit bytes across many chunks of any size', () => {
  const all: Buffer[] = [];
  const kept = new OutputTail(1000);
  for (let index = 0; index < 500; index += 1) {
    const chunk = Buffer.from(`${index}:` + 'y'.repeat((index * 37) % 300) + '\n');
    all.push(chunk);
    kept.push(chunk);
    const whole = Buffer.concat(all);
    assert.equal(kept.bytes(), whole.subarray(Math.max(0, whole.length - 1000)), `after chunk ${index}`);
  }
  assert.is(kept.truncated, true);
  kept.push(Buffer.alloc(5000, 'z'));
  assert.is(kept.text(), 'z'.repeat(1000));
});

tail('drops a character cut in half at the front of the kept bytes', () => {
  const kept = new OutputTail(5);
  kept.push(Buffer.from('a€bcd')); // € is three bytes, e2 82 ac: the last 5 bytes start inside it
  assert.is(kept.text(), 'bcd');
  const four = new OutputTail(6);
  four.push(Buffer.from('x🎉abc')); // keeps 9f 8e 89 a b c: the three continuation bytes go
  assert.is(four.text(), 'abc');
});

tail('a limit of 0 keeps nothing and reports the output as truncated', () => {
  const kept = new OutputTail(0);
  kept.push(Buffer.from('data'));
  assert.is(kept.text(), '');
  assert.is(kept.truncated, true);
});

tail.run();
