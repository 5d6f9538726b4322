// The QR encoder against ISO/IEC 18004: its layout read back module by module, Reed–Solomon checked
// by slow long division, the mask choice against a naive penalty count, and every symbol kind
// decoded by zbar (zbarimg), a decoder written by nobody here, from a PNG that rsvg-convert drew.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  computeReedSolomonRemainder,
  encodeQr,
  encodeQrBytes,
  getAlignmentPatternPositions,
  getByteCapacity,
  getDataCodewordCount,
  getFormatBits,
  getPenaltyScore,
  getRawDataModuleCount,
  getVersionBits,
  type QrCode,
} from '../../src/core/qr';
import { qrToSvg } from '../../src/core/qr-svg';
import { qrToTerminal } from '../../src/core/qr-text';
import { suiteNeeding } from '../helpers/tools';

const runFile = promisify(execFile);
const utf8 = new TextEncoder();

/** A small seeded generator (mulberry32), so that every run draws the same "random" links. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const LINK_PREFIX = 'http://192.168.1.20:7718/pair?t=';
function makeLink(length: number, random: () => number): string {
  let link = LINK_PREFIX;
  while (link.length < length) link += BASE64URL[Math.floor(random() * 64)];
  return link.slice(0, length);
}

// ---------------------------------------------------------------------------------------------
// Independent helpers: GF(2^8) by shift-and-add, BCH by bitwise division, penalty by brute force.

function slowMultiply(left: number, right: number): number {
  let product = 0;
  for (let bit = 7; bit >= 0; bit--) {
    product = (product << 1) ^ ((product >>> 7) * 0x11d);
    if ((right >>> bit) & 1) product ^= left;
  }
  return product;
}

function slowPower(exponent: number): number {
  let value = 1;
  for (let step = 0; step < exponent; step++) value = slowMultiply(value, 2);
  return value;
}

/** (x − α^0)…(x − α^(degree−1)), coefficients highest power first, leading 1 included. */
function slowGenerator(degree: number): number[] {
  let polynomial = [1];
  for (let root = 0; root < degree; root++) {
    const next = new Array<number>(polynomial.length + 1).fill(0);
    for (let index = 0; index < polynomial.length; index++) {
      next[index] ^= polynomial[index]!;
      next[index + 1] ^= slowMultiply(polynomial[index]!, slowPower(root));
    }
    polynomial = next;
  }
  return polynomial;
}

/** data(x) · x^degree mod generator(x), by schoolbook long division. */
function slowRemainder(data: number[], degree: number): number[] {
  const generator = slowGenerator(degree);
  const dividend = [...data, ...new Array<number>(degree).fill(0)];
  for (let index = 0; index < data.length; index++) {
    const factor = dividend[index]!;
    if (factor === 0) continue;
    for (let term = 0; term < generator.length; term++) dividend[index + term] ^= slowMultiply(generator[term]!, factor);
  }
  return dividend.slice(data.length);
}

/** Evaluates a codeword polynomial (highest power first) at x by Horner's rule. */
function evaluate(polynomial: number[], x: number): number {
  return polynomial.reduce((sum, coefficient) => slowMultiply(sum, x) ^ coefficient, 0);
}

function bchRemainder(value: number, generator: number): number {
  const degree = 31 - Math.clz32(generator);
  for (let bit = 31 - Math.clz32(value); bit >= degree; bit--) {
    if ((value >>> bit) & 1) value ^= generator << (bit - degree);
  }
  return value;
}

function readFormatCopies(code: QrCode): [number, number] {
  const size = code.size;
  const first: [number, number][] = [];
  const second: [number, number][] = [];
  for (let bit = 0; bit < 15; bit++) {
    first.push(bit <= 5 ? [8, bit] : bit === 6 ? [8, 7] : bit === 7 ? [8, 8] : bit === 8 ? [7, 8] : [14 - bit, 8]);
    second.push(bit < 8 ? [size - 1 - bit, 8] : [8, size - 15 + bit]);
  }
  const read = (places: [number, number][]) => places.reduce((bits, [x, y], bit) => bits | (code.isDark(x, y) ? 1 << bit : 0), 0);
  return [read(first), read(second)];
}

function readVersionCopies(code: QrCode): [number, number] {
  let topRight = 0;
  let bottomLeft = 0;
  for (let bit = 0; bit < 18; bit++) {
    const along = code.size - 11 + (bit % 3);
    const across = Math.floor(bit / 3);
    if (code.isDark(along, across)) topRight |= 1 << bit;
    if (code.isDark(across, along)) bottomLeft |= 1 << bit;
  }
  return [topRight, bottomLeft];
}

/** Table 11 counted the slow way: every run, every 2 × 2 block, every 11-module window, the dark share. */
function naivePenalty(code: QrCode): number {
  const size = code.size;
  const lines: number[][] = [];
  for (let a = 0; a < size; a++) {
    lines.push(Array.from({ length: size }, (_, b) => (code.isDark(b, a) ? 1 : 0)));
    lines.push(Array.from({ length: size }, (_, b) => (code.isDark(a, b) ? 1 : 0)));
  }
  let score = 0;
  for (const line of lines) {
    let start = 0;
    for (let index = 1; index <= size; index++) {
      if (index === size || line[index] !== line[start]) {
        if (index - start >= 5) score += 3 + (index - start - 5);
        start = index;
      }
    }
    const padded = [0, 0, 0, 0, ...line, 0, 0, 0, 0].join('');
    for (let index = 0; index + 11 <= padded.length; index++) {
      const window = padded.slice(index, index + 11);
      if (window === '00001011101' || window === '10111010000') score += 40;
    }
  }
  let dark = 0;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (code.isDark(x, y)) dark++;
      const colour = code.isDark(x, y);
      if (x < size - 1 && y < size - 1 && code.isDark(x + 1, y) === colour && code.isDark(x, y + 1) === colour && code.isDark(x + 1, y + 1) === colour) score += 3;
    }
  }
  const total = size * size;
  let steps = 0;
  while (Math.abs(20 * dark - 10 * total) >= (steps + 1) * total) steps++;
  return score + 10 * steps;
}

// ---------------------------------------------------------------------------------------------
const layout = suite('qr layout');

layout('a short text takes version 1, and every version has 17 + 4 · version modules a side', () => {
  const code = encodeQr('hello');
  assert.is(code.version, 1);
  assert.is(code.size, 21);
  for (let version = 1; version <= 40; version++) {
    const forced = encodeQrBytes(utf8.encode('size'), { minVersion: version });
    assert.is(forced.version, version);
    assert.is(forced.size, 17 + 4 * version);
  }
});

layout('picks the smallest version whose byte capacity holds the text', () => {
  for (const version of [1, 2, 9, 10, 26, 40]) {
    const capacity = getByteCapacity(version);
    assert.is(encodeQr('a'.repeat(capacity)).version, version, `version ${version}, ${capacity} bytes`);
    if (version < 40) assert.is(encodeQr('a'.repeat(capacity + 1)).version, version + 1);
  }
});

layout('capacities follow Table 1 (codewords, remainder bits) and Table 7 (bytes at level M)', () => {
  const totalCodewords = [
    26, 44, 70, 100, 134, 172, 196, 242, 292, 346, 404, 466, 532, 581, 655, 733, 815, 901, 991, 1085,
    1156, 1258, 1364, 1474, 1588, 1706, 1828, 1921, 2051, 2185, 2323, 2465, 2611, 2761, 2876, 3034, 3196, 3362, 3532, 3706,
  ];
  const remainderBits = (version: number) => (version === 1 ? 0 : version <= 6 ? 7 : version <= 13 ? 0 : version <= 20 ? 3 : version <= 27 ? 4 : version <= 34 ? 3 : 0);
  for (let version = 1; version <= 40; version++) {
    assert.is(Math.floor(getRawDataModuleCount(version) / 8), totalCodewords[version - 1], `codewords of version ${version}`);
    assert.is(getRawDataModuleCount(version) % 8, remainderBits(version), `remainder bits of version ${version}`);
  }
  const byteCapacity: Record<number, number> = { 1: 14, 2: 26, 3: 42, 4: 62, 5: 84, 6: 106, 7: 122, 8: 152, 9: 180, 10: 213, 11: 251, 20: 666, 40: 2331 };
  for (const [version, bytes] of Object.entries(byteCapacity)) assert.is(getByteCapacity(Number(version)), bytes, `bytes of version ${version}`);
  assert.is(getDataCodewordCount(1), 16);
  assert.is(getDataCodewordCount(40), 2334);
});

layout('finder patterns with light separators sit in three corners', () => {
  for (const version of [1, 7, 40]) {
    const code = encodeQrBytes(utf8.encode('finder'), { minVersion: version });
    for (const [centreX, centreY] of [[3, 3], [code.size - 4, 3], [3, code.size - 4]] as const) {
      for (let dy = -4; dy <= 4; dy++) {
        for (let dx = -4; dx <= 4; dx++) {
          const x = centreX + dx;
          const y = centreY + dy;
          if (x < 0 || y < 0 || x >= code.size || y >= code.size) continue;
          const ring = Math.max(Math.abs(dx), Math.abs(dy));
          assert.is(code.isDark(x, y), ring <= 1 || ring === 3, `version ${version} at (${x}, ${y})`);
        }
      }
    }
  }
});

layout('timing patterns alternate dark and light along row 6 and column 6', () => {
  for (const version of [1, 2, 13, 40]) {
    const code = encodeQrBytes(utf8.encode('timing'), { minVersion: version });
    for (let index = 8; index <= code.size - 9; index++) {
      assert.is(code.isDark(index, 6), index % 2 === 0, `row 6, column ${index}`);
      assert.is(code.isDark(6, index), index % 2 === 0, `column 6, row ${index}`);
    }
  }
});

layout('the dark module sits at (8, 4 · version + 9) in every version', () => {
  for (let version = 1; version <= 40; version++) {
    for (const mask of [0, 5]) assert.ok(encodeQrBytes(utf8.encode('dark'), { minVersion: version, mask }).isDark(8, 4 * version + 9));
  }
});

layout('alignment patterns sit at the positions of Annex E', () => {
  const annexE: Record<number, number[]> = {
    1: [], 2: [6, 18], 6: [6, 34], 7: [6, 22, 38], 14: [6, 26, 46, 66], 15: [6, 26, 48, 70], 21: [6, 28, 50, 72, 94],
    28: [6, 26, 50, 74, 98, 122], 32: [6, 34, 60, 86, 112, 138], 36: [6, 24, 50, 76, 102, 128, 154], 40: [6, 30, 58, 86, 114, 142, 170],
  };
  for (const [version, positions] of Object.entries(annexE)) {
    assert.equal(getAlignmentPatternPositions(Number(version)), positions, `version ${version}`);
  }
  for (let version = 2; version <= 40; version++) {
    const code = encodeQrBytes(utf8.encode('align'), { minVersion: version });
    const positions = getAlignmentPatternPositions(version);
    assert.is(positions.length, Math.floor(version / 7) + 2);
    assert.is(positions.at(-1), code.size - 7);
    for (const cy of positions) {
      for (const cx of positions) {
        if ((cx === 6 && cy === 6) || (cx === 6 && cy === code.size - 7) || (cx === code.size - 7 && cy === 6)) continue;
        for (let dy = -2; dy <= 2; dy++) {
          for (let dx = -2; dx <= 2; dx++) {
            assert.is(code.isDark(cx + dx, cy + dy), Math.max(Math.abs(dx), Math.abs(dy)) !== 1, `version ${version} pattern (${cx}, ${cy})`);
          }
        }
      }
    }
  }
});

layout('format information decodes back to level M and the mask, in both copies', () => {
  // Table C.1, level M: the masked 15-bit sequences for masks 0 to 7.
  assert.equal([0, 1, 2, 3, 4, 5, 6, 7].map(getFormatBits), [0x5412, 0x5125, 0x5e7c, 0x5b4b, 0x45f9, 0x40ce, 0x4f97, 0x4aa0]);
  for (const version of [1, 8, 33]) {
    for (let mask = 0; mask < 8; mask++) {
      const code = encodeQrBytes(utf8.encode('format'), { minVersion: version, mask });
      const [first, second] = readFormatCopies(code);
      assert.is(first, second);
      const unmasked = first ^ 0b101010000010010;
      assert.is(bchRemainder(unmasked, 0b10100110111), 0, 'a valid BCH(15,5) codeword');
      assert.is(unmasked >>> 13, 0b00, 'level M');
      assert.is((unmasked >>> 10) & 7, mask);
    }
  }
});

layout('version information appears from version 7 and decodes back to the version', () => {
  // Table D.1.
  assert.is(getVersionBits(7), 0x07c94);
  assert.is(getVersionBits(8), 0x085bc);
  assert.is(getVersionBits(40), 0x28c69);
  for (let version = 7; version <= 40; version++) {
    const code = encodeQrBytes(utf8.encode('version'), { minVersion: version });
    const [topRight, bottomLeft] = readVersionCopies(code);
    assert.is(topRight, bottomLeft);
    assert.is(topRight >>> 12, version);
    assert.is(bchRemainder(topRight, 0b1111100100101), 0, `a valid BCH(18,6) codeword for version ${version}`);
  }
});

// ---------------------------------------------------------------------------------------------
const reedSolomon = suite('qr reed-solomon');

reedSolomon('reproduces the error correction of the worked example in Annex I (1-M)', () => {
  const data = Uint8Array.from([0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11]);
  assert.equal([...computeReedSolomonRemainder(data, 10)], [0xa5, 0x24, 0xd4, 0xc1, 0xed, 0x36, 0xc7, 0x87, 0x2c, 0x55]);
});

reedSolomon('agrees with slow long division for every block shape of level M', () => {
  const random = seededRandom(7);
  for (const degree of [10, 16, 18, 22, 24, 26, 28, 30]) {
    for (const length of [1, 13, 16, 43, 118, 123]) {
      const data = Array.from({ length }, () => Math.floor(random() * 256));
      const ecc = [...computeReedSolomonRemainder(Uint8Array.from(data), degree)];
      assert.equal(ecc, slowRemainder(data, degree), `degree ${degree}, ${length} data codewords`);
      // A Reed–Solomon codeword vanishes at every root of the generator.
      for (let root = 0; root < degree; root++) assert.is(evaluate([...data, ...ecc], slowPower(root)), 0);
    }
  }
  assert.equal([...computeReedSolomonRemainder(new Uint8Array(20), 10)], new Array(10).fill(0));
});

reedSolomon('refuses a degree outside 1 to 254', () => {
  assert.throws(() => computeReedSolomonRemainder(new Uint8Array(3), 0), (error: unknown) => error instanceof RangeError && /degree/.test(String(error)));
});

// ---------------------------------------------------------------------------------------------
const masks = suite('qr masks');

masks('the penalty score agrees with a brute-force count of the four rules', () => {
  const random = seededRandom(11);
  for (const length of [5, 60, 200, 700]) {
    for (const mask of [0, 3, 6]) {
      const code = encodeQrBytes(utf8.encode(makeLink(length, random)), { mask });
      assert.is(getPenaltyScore(code), naivePenalty(code), `${length} characters, mask ${mask}`);
    }
  }
});

masks('the automatic mask has the lowest penalty of all eight, the first on a tie', () => {
  const random = seededRandom(13);
  const chosen = new Set<number>();
  for (const length of [3, 20, 45, 90, 150, 220, 320, 500, 800]) {
    const text = makeLink(length, random);
    const automatic = encodeQr(text);
    const scores = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => {
      const forced = encodeQrBytes(utf8.encode(text), { mask });
      assert.is(forced.mask, mask);
      assert.is(forced.version, automatic.version);
      return getPenaltyScore(forced);
    });
    const best = Math.min(...scores);
    assert.is(automatic.mask, scores.indexOf(best), `${length} characters: scores ${scores.join(', ')}`);
    assert.is(getPenaltyScore(automatic), best);
    chosen.add(automatic.mask);
  }
  assert.ok(chosen.size >= 2, 'different texts choose different masks');
});

masks('forced masks change only data modules and the format information', () => {
  const text = utf8.encode(makeLink(70, seededRandom(17)));
  const codes = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => encodeQrBytes(text, { mask }));
  // The finder corner and timing row are the same under every mask.
  for (const code of codes) {
    for (let x = 0; x < 8; x++) assert.is(code.isDark(x, 0), codes[0]!.isDark(x, 0));
    for (let x = 8; x < code.size - 8; x++) assert.is(code.isDark(x, 6), x % 2 === 0);
  }
  // Two masks differ in data modules exactly where their Table 10 conditions differ; a data module
  // of version 5 is any module right of column 8 in rows 9 to 16 (its alignment pattern is lower).
  const condition = [
    (x: number, y: number) => (y + x) % 2 === 0,
    (_x: number, y: number) => y % 2 === 0,
    (x: number) => x % 3 === 0,
    (x: number, y: number) => (y + x) % 3 === 0,
    (x: number, y: number) => (Math.floor(y / 2) + Math.floor(x / 3)) % 2 === 0,
    (x: number, y: number) => ((y * x) % 2) + ((y * x) % 3) === 0,
    (x: number, y: number) => (((y * x) % 2) + ((y * x) % 3)) % 2 === 0,
    (x: number, y: number) => (((y + x) % 2) + ((y * x) % 3)) % 2 === 0,
  ];
  assert.is(codes[0]!.version, 5);
  for (let mask = 1; mask < 8; mask++) {
    for (let y = 9; y <= 16; y++) {
      for (let x = 9; x < codes[0]!.size; x++) {
        const differs = codes[mask]!.isDark(x, y) !== codes[0]!.isDark(x, y);
        assert.is(differs, condition[mask]!(x, y) !== condition[0]!(x, y), `mask ${mask} at (${x}, ${y})`);
      }
    }
  }
});

// ---------------------------------------------------------------------------------------------
const limits = suite('qr limits');

limits('2331 bytes fit version 40; one more throws a RangeError naming the limit', () => {
  assert.is(encodeQr('x'.repeat(2331)).version, 40);
  assert.throws(() => encodeQr('x'.repeat(2332)), (error: unknown) => error instanceof RangeError && /2332 bytes/.test(String(error)) && /2331/.test(String(error)));
  // Characters count as their UTF-8 bytes: 1166 two-byte characters are 2332 bytes.
  assert.throws(() => encodeQr('é'.repeat(1166)), (error: unknown) => error instanceof RangeError && /2332 bytes/.test(String(error)));
});

limits('refuses a mask or minimum version out of range', () => {
  const bytes = utf8.encode('x');
  for (const mask of [-1, 8, 1.5, Number.NaN]) {
    assert.throws(() => encodeQrBytes(bytes, { mask }), (error: unknown) => error instanceof RangeError && /mask/.test(String(error)));
  }
  for (const minVersion of [0, 41, 2.5]) {
    assert.throws(() => encodeQrBytes(bytes, { minVersion }), (error: unknown) => error instanceof RangeError && /version/.test(String(error)));
  }
  assert.throws(() => getByteCapacity(41), RangeError);
});

// ---------------------------------------------------------------------------------------------
const renderers = suite('qr renderers');

renderers('the SVG holds one white rect and one path whose runs redraw the symbol', () => {
  const code = encodeQr(makeLink(100, seededRandom(19)));
  const svg = qrToSvg(code);
  const extent = code.size + 8;
  assert.match(svg, new RegExp(`^<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${extent} ${extent}" width="${extent * 8}" height="${extent * 8}" shape-rendering="crispEdges">`));
  assert.equal(svg.match(/<\w+/g), ['<svg', '<rect', '<path'], 'only the generated elements');
  assert.not.match(svg, /script|title|on\w+=|href/i);
  assert.match(svg, new RegExp(`<rect width="${extent}" height="${extent}" fill="#fff"/>`));
  const drawn = new Set<string>();
  let runs = 0;
  for (const [, x, y, length, back] of svg.matchAll(/M(\d+),(\d+)h(\d+)v1h-(\d+)z/g)) {
    assert.is(length, back);
    runs++;
    for (let step = 0; step < Number(length); step++) drawn.add(`${Number(x) - 4 + step},${Number(y) - 4}`);
  }
  let expectedRuns = 0;
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; x++) {
      assert.is(drawn.has(`${x},${y}`), code.isDark(x, y), `module (${x}, ${y})`);
      if (code.isDark(x, y) && !code.isDark(x - 1, y)) expectedRuns++;
    }
  }
  assert.is(runs, expectedRuns, 'one subpath per horizontal run');
});

renderers('the SVG takes a quiet zone, a module size and safe colours only', () => {
  const code = encodeQr('options');
  const svg = qrToSvg(code, { quietZone: 0, moduleSize: 2.5, dark: '#123456', light: 'white' });
  assert.match(svg, /viewBox="0 0 21 21" width="52.5" height="52.5"/);
  assert.match(svg, /fill="#123456"/);
  assert.match(svg, /<path d="M0,0h7v1h-7z/);
  for (const dark of ['red" onload="alert(1)', 'url(#x)', '<b>', '']) {
    assert.throws(() => qrToSvg(code, { dark }), (error: unknown) => error instanceof RangeError && /dark colour/.test(String(error)));
  }
  assert.throws(() => qrToSvg(code, { quietZone: -1 }), RangeError);
  assert.throws(() => qrToSvg(code, { moduleSize: 0 }), RangeError);
});

renderers('the terminal drawing packs two module rows per line in black on white', () => {
  const code = encodeQr(makeLink(60, seededRandom(23)));
  const text = qrToTerminal(code);
  const lines = text.split('\n');
  const extent = code.size + 8;
  assert.is(lines.length, Math.ceil(extent / 2));
  for (const line of lines) {
    assert.ok(line.startsWith('\x1b[30;47m') && line.endsWith('\x1b[0m'));
  }
  const plain = qrToTerminal(code, { color: false }).split('\n');
  assert.equal(plain, lines.map((line) => line.slice('\x1b[30;47m'.length, -'\x1b[0m'.length)));
  for (let row = 0; row < plain.length; row++) {
    const characters = [...plain[row]!];
    assert.is(characters.length, extent);
    characters.forEach((character, column) => {
      const x = column - 4;
      const y = row * 2 - 4;
      const expected = ' ▄▀█'[(code.isDark(x, y) ? 2 : 0) + (code.isDark(x, y + 1) ? 1 : 0)];
      assert.is(character, expected, `line ${row}, column ${column}`);
    });
  }
  assert.is(qrToTerminal(code, { quietZone: 0, color: false }).split('\n').length, Math.ceil(code.size / 2));
});

// ---------------------------------------------------------------------------------------------
// zbar: every symbol goes SVG → PNG (rsvg-convert, 4 pixels a module) → zbarimg, four at a time.
// Without the two tools these tests are skipped (failed under CI=true): see test/helpers/tools.ts.
const zbar = suiteNeeding('qr decoded by zbar', [
  { command: 'zbarimg', package: 'zbar-tools' },
  { command: 'rsvg-convert', package: 'librsvg2-bin' },
]);

let workDir = '';
let fileCount = 0;

zbar.before(() => {
  workDir = mkdtempSync(join(tmpdir(), 'factory-qr-'));
});
zbar.after(() => {
  rmSync(workDir, { recursive: true, force: true });
});

/** The bytes zbar reads from the rendered symbol, or null when it finds no symbol. */
async function decode(code: QrCode): Promise<Buffer | null> {
  const base = join(workDir, `symbol-${fileCount++}`);
  writeFileSync(`${base}.svg`, qrToSvg(code, { moduleSize: 4 }));
  await runFile('rsvg-convert', ['-o', `${base}.png`, `${base}.svg`]);
  try {
    const { stdout } = await runFile('zbarimg', ['--raw', '-q', '--nodbus', '-Sbinary', `${base}.png`], { encoding: 'buffer', maxBuffer: 1 << 20 });
    return stdout;
  } catch {
    return null;
  }
}

interface Sample {
  label: string;
  bytes: Uint8Array;
  options?: { mask?: number; minVersion?: number };
}

/** Encodes and decodes every sample; returns the versions and masks seen. */
async function assertRoundTrips(samples: Sample[]): Promise<{ versions: Set<number>; masks: Set<number> }> {
  const versions = new Set<number>();
  const masksSeen = new Set<number>();
  const failures: string[] = [];
  const queue = [...samples];
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let sample = queue.shift(); sample; sample = queue.shift()) {
      const code = encodeQrBytes(sample.bytes, sample.options);
      const decoded = await decode(code);
      if (decoded === null || !Buffer.from(sample.bytes).equals(decoded)) {
        failures.push(`${sample.label} (version ${code.version}, mask ${code.mask}): ${decoded === null ? 'no symbol found' : `read ${decoded.length} different bytes`}`);
      }
      versions.add(code.version);
      masksSeen.add(code.mask);
    }
  }));
  assert.equal(failures, [], 'every symbol decodes to its exact bytes');
  return { versions, masks: masksSeen };
}

zbar('links of 20 to 500 characters decode to the exact text', async () => {
  const random = seededRandom(29);
  const samples: Sample[] = [];
  for (let length = 20; length <= 500; length += 12 + Math.floor(random() * 12)) {
    samples.push({ label: `${length}-character link`, bytes: utf8.encode(makeLink(length, random)) });
  }
  samples.push({ label: '500-character link', bytes: utf8.encode(makeLink(500, random)) });
  const { versions } = await assertRoundTrips(samples);
  assert.ok(versions.has(2) && versions.has(17), `versions ${[...versions].join(', ')}`);
});

zbar('every version from 1 to 40 decodes', async () => {
  const random = seededRandom(31);
  const samples: Sample[] = [];
  for (let version = 1; version <= 40; version++) {
    // Fill each version to near its capacity so the data runs through every block.
    const length = getByteCapacity(version) - Math.floor(random() * 4);
    samples.push({ label: `version ${version}`, bytes: utf8.encode(makeLink(length, random)), options: { minVersion: version } });
  }
  const { versions } = await assertRoundTrips(samples);
  assert.is(versions.size, 40);
});

zbar('every mask decodes, forced on small and large symbols', async () => {
  const random = seededRandom(37);
  const samples: Sample[] = [];
  for (let mask = 0; mask < 8; mask++) {
    samples.push({ label: `mask ${mask}, short`, bytes: utf8.encode(makeLink(40, random)), options: { mask } });
    samples.push({ label: `mask ${mask}, 900 characters`, bytes: utf8.encode(makeLink(900, random)), options: { mask } });
  }
  const { masks: seen } = await assertRoundTrips(samples);
  assert.is(seen.size, 8);
});

zbar('long texts up to the version-40 limit decode', async () => {
  const random = seededRandom(41);
  const samples = [1000, 1400, 1800, 2100, 2331].map((length) => ({ label: `${length}-character text`, bytes: utf8.encode(makeLink(length, random)) }));
  const { versions } = await assertRoundTrips(samples);
  assert.ok(versions.has(40));
});

zbar('unicode text decodes as its UTF-8 bytes', async () => {
  const texts = [
    `${LINK_PREFIX}ünïcødé-€`,
    'Pipeline “déploiement” ✓ — 配置完成 🚀',
    'Привет, мир! Ελληνικά. עברית. العربية.',
    '🙂'.repeat(60),
  ];
  await assertRoundTrips(texts.map((text, index) => ({ label: `unicode ${index}`, bytes: utf8.encode(text) })));
});

zbar('all 256 byte values decode', async () => {
  const random = seededRandom(43);
  const everyByte = Uint8Array.from({ length: 256 }, (_, index) => index);
  const shuffled = Uint8Array.from({ length: 700 }, () => Math.floor(random() * 256));
  await assertRoundTrips([
    { label: 'bytes 0 to 255', bytes: everyByte },
    { label: 'bytes 255 to 0', bytes: everyByte.slice().reverse() },
    { label: '700 random bytes', bytes: shuffled },
  ]);
});

layout.run();
reedSolomon.run();
masks.run();
limits.run();
renderers.run();
zbar.run();
