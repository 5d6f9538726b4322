// One attempt's log as bytes and an index: writing as output comes (cut anywhere), pages read from
// the end, search, the limits on what one answer carries, the live feed, and crash leftovers.
import { appendFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LiveFeed } from '../../src/store/live-feed';
import { StepLogWriter } from '../../src/store/step-log';
import { maxShownLineLength } from '../../src/store/step-log-format';
import { rawLogPath, readPage } from '../../src/store/step-log-reader';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const log = suite<{ dir: string; path: string }>('step log');

log.before.each((context) => {
  context.dir = makeTempDir('factory-step-log');
  context.path = join(context.dir, 'logs', 'build.1');
});
log.after.each((context) => removeTempDir(context.dir));

const all = { limit: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };
let clock = 1000;
const now = () => (clock += 1);

async function write(path: string, fill: (writer: StepLogWriter) => void, live?: LiveFeed): Promise<void> {
  const writer = new StepLogWriter(path, now, live);
  fill(writer);
  await writer.end();
}

log('output cut anywhere (inside a line, inside a character) comes back as whole lines, in order, per stream', async ({ path }) => {
  const text = 'één\ntwee 🚀\ndrie';
  const bytes = Buffer.from(text);
  await write(path, (writer) => {
    for (let at = 0; at < bytes.length; at++) writer.output(bytes.subarray(at, at + 1), 'out');
    writer.output(Buffer.from('warning: careful\n'), 'err');
    writer.line('Succeeded in 1 s', 'info');
  });
  const page = (await readPage(path, all))!;
  assert.equal(page.lines.map(({ n, line, stream }) => [n, line, stream]), [
    [1, 'één', 'out'], [2, 'twee 🚀', 'out'], [3, 'warning: careful', 'err'], [4, 'Succeeded in 1 s', 'info'], [5, 'drie', 'out'],
  ]);
  assert.equal([page.total, page.earlier], [5, 0]);
  assert.is(readFileSync(`${path}.log`, 'utf8'), 'één\ntwee 🚀\nwarning: careful\nSucceeded in 1 s\ndrie\n', 'the bytes as they came');
  assert.is(await rawLogPath(path), `${path}.log`);
});

log('a page is the last lines before a line number; the earlier ones are counted', async ({ path }) => {
  await write(path, (writer) => {
    for (let chunk = 0; chunk < 50; chunk++) writer.output(Buffer.from(Array.from({ length: 2000 }, (_, at) => `${chunk * 2000 + at + 1}\n`).join('')), 'out');
  });
  const tail = (await readPage(path, { limit: 1000, maxBytes: 2e6 }))!;
  assert.equal([tail.total, tail.earlier, tail.lines.length, tail.lines[0]!.n, tail.lines.at(-1)!.line], [100_000, 99_000, 1000, 99_001, '100000']);
  const earlier = (await readPage(path, { before: 99_001, limit: 1000, maxBytes: 2e6 }))!;
  assert.equal([earlier.lines[0]!.line, earlier.lines.at(-1)!.line, earlier.earlier], ['98001', '99000', 98_000]);
  const first = (await readPage(path, { before: 3, limit: 1000, maxBytes: 2e6 }))!;
  assert.equal([first.lines.map((line) => line.line), first.earlier], [['1', '2'], 0]);
  const bounded = (await readPage(path, { limit: 10_000, maxBytes: 600 }))!;
  assert.ok(bounded.lines.reduce((sum, line) => sum + line.line.length + 1, 0) <= 600, 'no more bytes than asked');
  assert.is(bounded.earlier + bounded.lines.length, 100_000);
});

log('search finds the last matches before a line, in any letter case, and counts the earlier ones', async ({ path }) => {
  await write(path, (writer) => {
    for (let index = 1; index <= 5000; index++) writer.line(index % 1000 === 0 ? `ERROR number ${index}` : `fine ${index}`, 'out');
  });
  const found = (await readPage(path, { limit: 2, maxBytes: 2e6, search: 'error' }))!;
  assert.equal(found.lines.map((line) => [line.n, line.line]), [[4000, 'ERROR number 4000'], [5000, 'ERROR number 5000']]);
  assert.is(found.earlier, 3);
  const before = (await readPage(path, { before: 4000, limit: 10, maxBytes: 2e6, search: 'ERROR' }))!;
  assert.equal(before.lines.map((line) => line.n), [1000, 2000, 3000]);
});

log('search text is found literally: regular-expression characters match themselves, never as a pattern', async ({ path }) => {
  const lines = ['call foo(1)', 'foo bar', 'pattern (a+)+$ in a line', 'a'.repeat(28) + '!', 'a.c', 'abc', '[x] done', 'x', 'C:\\temp\\*.log', 'end'];
  await write(path, (writer) => {
    for (const line of lines) writer.line(line, 'out');
  });
  const found = async (search: string) => (await readPage(path, { ...all, search }))!.lines.map((line) => [line.n, line.line]);
  assert.equal(await found('foo('), [[1, 'call foo(1)']], 'an unclosed group');
  assert.equal(await found('(a+)+$'), [[3, 'pattern (a+)+$ in a line']], 'a pattern that backtracks without end, as text');
  assert.equal(await found('a.c'), [[5, 'a.c']], 'a dot is a dot');
  assert.equal(await found('[x]'), [[7, '[x] done']], 'brackets are brackets');
  assert.equal(await found('\\*.LOG'), [[9, 'C:\\temp\\*.log']], 'a backslash and a star, in any letter case');
  assert.equal(await found('^end'), [], 'an anchor is text');
  assert.equal(await found('|'), [], 'an alternation is text');
});

log('a line without an end is cut after 64 KiB; a long line is shown cut with a note; control characters are not shown', async ({ path }) => {
  await write(path, (writer) => {
    for (let piece = 0; piece < 4; piece++) writer.output(Buffer.alloc(50 * 1024, 'a'), 'out');
    writer.output(Buffer.from('\nbell\u0007 red \u001b[31mx\n'), 'out');
  });
  const { lines } = (await readPage(path, all))!;
  assert.is(lines.length, 3, 'two pieces of 100 KiB (the memory a line may take is bounded), then the next line');
  assert.ok(lines[0]!.line.startsWith('a'.repeat(maxShownLineLength)) && lines[0]!.line.endsWith('(86016 more characters: download the log)'));
  assert.is(lines.at(-1)!.line, 'bell red \u001b[31mx');
});

log('a crash leaves a torn index record and bytes no record names: both still read', async ({ path }) => {
  await write(path, (writer) => writer.line('indexed', 'err'));
  appendFileSync(`${path}.idx`, Buffer.alloc(7));
  appendFileSync(`${path}.log`, 'after the last record\nand a torn');
  const page = (await readPage(path, all))!;
  assert.equal(page.lines.map((line) => [line.line, line.stream]), [['indexed', 'err'], ['after the last record', 'out'], ['and a torn', 'out']]);
  await write(path, (writer) => writer.line('after a restart', 'info'));
  assert.is(readFileSync(`${path}.idx`).length % 32, 0, 'the torn record was cut away before appending');
  assert.ok((await readPage(path, all))!.lines.some((line) => line.line === 'after a restart'));
  truncateSync(`${path}.idx`, 0);
  assert.is((await readPage(path, all))!.total, 4, 'no index at all: the bytes still count');
  writeFileSync(`${path}.idx`, Buffer.alloc(64, 0xff));
  assert.is((await readPage(path, all))!.total, 4, 'a garbled index is ignored');
});

log('no log in this format: undefined', async ({ path }) => {
  assert.is(await readPage(path, all), undefined);
  assert.is(await rawLogPath(path), undefined);
});

log('the live feed keeps the newest lines within its bytes and counts what it dropped', async ({ path }) => {
  const live = new LiveFeed(1000);
  await write(path, (writer) => {
    for (let index = 1; index <= 500; index++) writer.output(Buffer.from(`line ${index}\n`), 'out');
  }, live);
  const taken = live.take();
  assert.ok(taken.lines.reduce((sum, line) => sum + line.line.length + 1, 0) <= 1000);
  assert.is(taken.skipped + taken.lines.length, 500);
  assert.is(taken.lines.at(-1)!.line, 'line 500');
  assert.is(live.pending, false);
  const huge = new LiveFeed(100);
  huge.push(Buffer.from(Array.from({ length: 100 }, (_, at) => `${at}\n`).join('')), 100, 1, 'out');
  const cut = huge.take();
  assert.equal([cut.skipped + cut.lines.length, cut.lines.at(-1)!.line], [100, '99']);
});

log.run();
