// QR Code encoder after ISO/IEC 18004:2015, whose clause, table and annex numbers the comments cite:
// byte mode, error-correction level M, versions 1–40 chosen automatically, all eight masks scored
// with the four penalty rules. Pure: drawing the symbol lives in qr-svg.ts and qr-text.ts.
//
// Coordinates follow the standard's figures: x is the column (left to right), y is the row (top to
// bottom), both from 0. Module values are 1 for dark and 0 for light.

/** A finished QR Code symbol. Immutable. */
export interface QrCode {
  /** 1 to 40. */
  readonly version: number;
  /** Modules per side: 17 + 4 · version, so 21 to 177. */
  readonly size: number;
  /** The data mask pattern reference, 0 to 7. */
  readonly mask: number;
  /** Whether the module at column x, row y is dark; false for any coordinate outside the symbol. */
  isDark(x: number, y: number): boolean;
}

/** Options for `encodeQrBytes`; both are for tests and special layouts, the defaults suit everyone else. */
export interface QrEncodeOptions {
  /** Force this mask (0 to 7) instead of the one with the lowest penalty score. */
  mask?: number;
  /** The smallest version to use (1 to 40, default 1); a larger one is chosen when the data needs it. */
  minVersion?: number;
}

export const MIN_VERSION = 1;
export const MAX_VERSION = 40;

// Table 9, level M: error-correction codewords per block, indexed by version (index 0 unused).
const ECC_CODEWORDS_PER_BLOCK_M = [
  0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
  26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
] as const;

// Table 9, level M: number of error-correction blocks, indexed by version (index 0 unused).
const ERROR_CORRECTION_BLOCKS_M = [
  0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
  17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
] as const;

// Table 2: mode indicator of the byte mode.
const BYTE_MODE_INDICATOR = 0b0100;
// Table 12: error-correction level indicator of level M in the format information.
const LEVEL_M_INDICATOR = 0b00;
// 7.4.10: pad codewords appended alternately after the terminator.
const PAD_CODEWORDS = [0b11101100, 0b00010001] as const;
// 7.9.1: BCH(15,5) generator x^10 + x^8 + x^5 + x^4 + x^2 + x + 1, and the mask XORed onto the result.
const FORMAT_GENERATOR = 0b101_0011_0111;
const FORMAT_XOR_MASK = 0b101_0100_0001_0010;
// 7.10: BCH(18,6) generator x^12 + x^11 + x^10 + x^9 + x^8 + x^5 + x^2 + 1.
const VERSION_GENERATOR = 0b1_1111_0010_0101;
// 7.5.2: GF(2^8) is built on the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1.
const FIELD_PRIMITIVE = 0b1_0001_1101;
// 7.8.3, Table 11: weights of the penalty rules N1 to N4.
const PENALTY_RUN = 3;
const PENALTY_BLOCK = 3;
const PENALTY_FINDER_LIKE = 40;
const PENALTY_BALANCE = 10;
// 7.8.3 N3: 1:1:3:1:1 dark-light pattern beside 4 light modules, as 11-bit windows read along a line.
const FINDER_LIKE_LIGHT_BEFORE = 0b0000_1011101;
const FINDER_LIKE_LIGHT_AFTER = 0b1011101_0000;

/**
 * Encodes text as its UTF-8 bytes in one byte-mode segment at level M, in the smallest version that
 * holds it, with the mask of lowest penalty. No ECI header: phone readers detect UTF-8 themselves.
 * Throws RangeError when the UTF-8 form is longer than `getByteCapacity(40)` = 2331 bytes.
 */
export function encodeQr(text: string): QrCode {
  return encodeQrBytes(UTF8.encode(text));
}

/**
 * Encodes bytes in one byte-mode segment at level M. The version is the smallest at or above
 * `options.minVersion` that holds the bytes; the mask is `options.mask` or the one of lowest penalty
 * (ties go to the lower mask number). Throws RangeError for more than 2331 bytes, or for a mask
 * outside 0–7 or a minimum version outside 1–40.
 */
export function encodeQrBytes(bytes: Uint8Array, options: QrEncodeOptions = {}): QrCode {
  const { mask, minVersion = MIN_VERSION } = options;
  if (mask !== undefined && !(Number.isInteger(mask) && mask >= 0 && mask <= 7)) {
    throw new RangeError(`QR mask must be an integer from 0 to 7, not ${mask}`);
  }
  if (!(Number.isInteger(minVersion) && minVersion >= MIN_VERSION && minVersion <= MAX_VERSION)) {
    throw new RangeError(`QR minimum version must be an integer from ${MIN_VERSION} to ${MAX_VERSION}, not ${minVersion}`);
  }
  const version = chooseVersion(bytes.length, minVersion);
  const codewords = addErrorCorrectionAndInterleave(makeDataCodewords(bytes, version), version);
  const layout = getLayout(version);
  const modules = layout.functionModules.slice();
  placeCodewords(modules, codewords, layout.dataModuleOrder);
  const chosenMask = mask ?? chooseMask(modules, layout);
  applyMask(modules, layout.maskPatterns[chosenMask]);
  drawFormatBits(modules, layout.size, chosenMask);
  return makeQrCode(version, chosenMask, modules);
}

/** How many bytes a byte-mode segment can hold at level M in this version (1 to 40): 14 to 2331. */
export function getByteCapacity(version: number): number {
  assertVersion(version);
  return Math.floor((getDataCodewordCount(version) * 8 - 4 - getCharacterCountBits(version)) / 8);
}

/** The number of data codewords at level M (Table 7): total codewords minus error correction. */
export function getDataCodewordCount(version: number): number {
  assertVersion(version);
  return getTotalCodewordCount(version) - ECC_CODEWORDS_PER_BLOCK_M[version] * ERROR_CORRECTION_BLOCKS_M[version];
}

/**
 * Modules left for data and error correction once every function pattern and the format and
 * version information are placed (Table 1, "data modules except"), remainder bits included.
 */
export function getRawDataModuleCount(version: number): number {
  assertVersion(version);
  const size = version * 4 + 17;
  // 6.3: three finder patterns with separators (8 × 8 each), format information and the dark module,
  // and the two timing patterns between the finders.
  let count = size * size - 3 * 64 - 31 - 2 * (size - 16);
  if (version >= 2) {
    // 6.3.6: alignment patterns (5 × 5) on every crossing of their positions but the three finder
    // corners; those on row or column 6 share 5 modules with a timing pattern.
    const positions = Math.floor(version / 7) + 2;
    count -= 25 * (positions * positions - 3) - 2 * 5 * (positions - 2);
  }
  // 7.10: two 6 × 3 blocks of version information from version 7.
  if (version >= 7) count -= 36;
  return count;
}

/**
 * Centre coordinates of the alignment patterns along each axis (Annex E), ascending: none for
 * version 1, else from 6 to size − 7, spaced evenly by an even step with any slack in the first gap.
 */
export function getAlignmentPatternPositions(version: number): number[] {
  assertVersion(version);
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  const last = version * 4 + 10;
  // Annex E rounds the spacing up to an even number; version 32 is the one exception in its table.
  const step = version === 32 ? 26 : Math.ceil((last - 6) / (count - 1) / 2) * 2;
  const positions = [6];
  for (let position = last - step * (count - 2); position <= last; position += step) positions.push(position);
  return positions;
}

/** The 15 format information bits for level M and a mask 0–7 (7.9.1), BCH-coded and masked. */
export function getFormatBits(mask: number): number {
  if (!(Number.isInteger(mask) && mask >= 0 && mask <= 7)) throw new RangeError(`QR mask must be an integer from 0 to 7, not ${mask}`);
  const data = (LEVEL_M_INDICATOR << 3) | mask;
  return ((data << 10) | getBchRemainder(data << 10, 15, FORMAT_GENERATOR)) ^ FORMAT_XOR_MASK;
}

/** The 18 version information bits (7.10): 6 bits of version, 12 of BCH code; symbols carry them from version 7. */
export function getVersionBits(version: number): number {
  assertVersion(version);
  return (version << 12) | getBchRemainder(version << 12, 18, VERSION_GENERATOR);
}

/**
 * The Reed–Solomon error-correction codewords for one block (7.5.2): the remainder of
 * data(x) · x^degree divided by the generator polynomial (x − α^0)(x − α^1)…(x − α^(degree−1)).
 * `degree` is 1 to 254 (the codes of Table 9 use 7 to 30); throws RangeError otherwise.
 */
export function computeReedSolomonRemainder(data: Uint8Array, degree: number): Uint8Array {
  const generator = getGeneratorPolynomial(degree);
  const remainder = new Uint8Array(degree);
  for (const byte of data) {
    const factor = byte ^ remainder[0];
    remainder.copyWithin(0, 1);
    remainder[degree - 1] = 0;
    if (factor === 0) continue;
    for (let index = 0; index < degree; index++) remainder[index] ^= multiplyInField(generator[index], factor);
  }
  return remainder;
}

/**
 * The penalty score of a finished symbol (7.8.3, Table 11), the figure the automatic mask choice
 * minimises. N3 reads the light quiet zone beyond the edges as light, and scores a 1:1:3:1:1 pattern
 * once for light on its left (or top) and once more for light on its right (or bottom).
 */
export function getPenaltyScore(code: QrCode): number {
  const modules = new Uint8Array(code.size * code.size);
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; x++) modules[y * code.size + x] = code.isDark(x, y) ? 1 : 0;
  }
  return scorePenalty(modules, code.size);
}

const UTF8 = new TextEncoder();

// 7.5.2: exponent and logarithm tables of GF(2^8); the exponent table runs twice round so that a sum
// of two logarithms indexes it without a modulo.
const FIELD_EXP = new Uint8Array(512);
const FIELD_LOG = new Uint8Array(256);
for (let power = 0, value = 1; power < 255; power++) {
  FIELD_EXP[power] = FIELD_EXP[power + 255] = value;
  FIELD_LOG[value] = power;
  value <<= 1;
  if (value & 0x100) value ^= FIELD_PRIMITIVE;
}

function assertVersion(version: number): void {
  if (!(Number.isInteger(version) && version >= MIN_VERSION && version <= MAX_VERSION)) {
    throw new RangeError(`QR version must be an integer from ${MIN_VERSION} to ${MAX_VERSION}, not ${version}`);
  }
}

// Table 1: the total number of codewords, the modules left for data, in whole bytes.
function getTotalCodewordCount(version: number): number {
  return Math.floor(getRawDataModuleCount(version) / 8);
}

// Table 3: the character count indicator of the byte mode is 8 bits up to version 9, 16 after.
function getCharacterCountBits(version: number): number {
  return version <= 9 ? 8 : 16;
}

// Table 7: the smallest version at or above the minimum whose capacity holds the data.
function chooseVersion(byteCount: number, minVersion: number): number {
  for (let version = minVersion; version <= MAX_VERSION; version++) {
    if (byteCount <= getByteCapacity(version)) return version;
  }
  throw new RangeError(
    `QR data is ${byteCount} bytes; at most ${getByteCapacity(MAX_VERSION)} bytes fit in a QR Code (version 40, level M)`,
  );
}

// 7.4: mode indicator, character count, the bytes, a terminator of up to four zero bits, zero bits
// to the byte boundary, then the pad codewords until the data capacity is full.
function makeDataCodewords(bytes: Uint8Array, version: number): Uint8Array {
  const codewords = new Uint8Array(getDataCodewordCount(version));
  const countBits = getCharacterCountBits(version);
  const header = (BYTE_MODE_INDICATOR << countBits) | bytes.length;
  const headerBits = 4 + countBits;
  let bitLength = 0;
  const appendBits = (value: number, length: number): void => {
    for (let bit = length - 1; bit >= 0; bit--, bitLength++) {
      if ((value >>> bit) & 1) codewords[bitLength >>> 3] |= 0x80 >>> (bitLength & 7);
    }
  };
  appendBits(header, headerBits);
  for (const byte of bytes) appendBits(byte, 8);
  bitLength = Math.min(bitLength + 4, codewords.length * 8);
  let index = Math.ceil(bitLength / 8);
  for (let pad = 0; index < codewords.length; index++, pad ^= 1) codewords[index] = PAD_CODEWORDS[pad];
  return codewords;
}

// 7.5 and 7.6: split the data into the blocks of Table 9 (the shorter blocks first), append each
// block's error correction, then interleave: data codeword i of every block, then ECC codeword i.
function addErrorCorrectionAndInterleave(data: Uint8Array, version: number): Uint8Array {
  const blockCount = ERROR_CORRECTION_BLOCKS_M[version];
  const eccLength = ECC_CODEWORDS_PER_BLOCK_M[version];
  const total = getTotalCodewordCount(version);
  const shortBlockCount = blockCount - (total % blockCount);
  const shortDataLength = Math.floor(total / blockCount) - eccLength;
  const result = new Uint8Array(total);
  let dataStart = 0;
  for (let block = 0; block < blockCount; block++) {
    const dataLength = shortDataLength + (block < shortBlockCount ? 0 : 1);
    const blockData = data.subarray(dataStart, dataStart + dataLength);
    dataStart += dataLength;
    for (let index = 0; index < dataLength; index++) {
      // Short blocks have no codeword at the last data index, so later blocks shift back by one there.
      const column = index < shortDataLength ? index * blockCount + block : shortDataLength * blockCount + block - shortBlockCount;
      result[column] = blockData[index];
    }
    const ecc = computeReedSolomonRemainder(blockData, eccLength);
    const eccStart = data.length;
    for (let index = 0; index < eccLength; index++) result[eccStart + index * blockCount + block] = ecc[index];
  }
  return result;
}

// 7.5.2: generator polynomials, highest power first with the leading 1 left out; cached by degree.
const generatorCache = new Map<number, Uint8Array>();
function getGeneratorPolynomial(degree: number): Uint8Array {
  if (!(Number.isInteger(degree) && degree >= 1 && degree <= 254)) {
    throw new RangeError(`Reed–Solomon degree must be an integer from 1 to 254, not ${degree}`);
  }
  const cached = generatorCache.get(degree);
  if (cached) return cached;
  // Multiply out (x − α^0)…(x − α^(degree−1)) one factor at a time; the product so far sits at the
  // end of the array, its constant term last (minus is plus in GF(2^8)).
  const coefficients = new Uint8Array(degree);
  coefficients[degree - 1] = 1;
  for (let root = 0; root < degree; root++) {
    for (let index = 0; index < degree; index++) {
      const lower = index + 1 < degree ? coefficients[index + 1] : 0;
      coefficients[index] = multiplyInField(coefficients[index], FIELD_EXP[root]) ^ lower;
    }
  }
  generatorCache.set(degree, coefficients);
  return coefficients;
}

function multiplyInField(left: number, right: number): number {
  return left === 0 || right === 0 ? 0 : FIELD_EXP[FIELD_LOG[left] + FIELD_LOG[right]];
}

// 7.9.1 and 7.10: the remainder of a BCH data polynomial (already shifted up) by its generator.
function getBchRemainder(shifted: number, totalBits: number, generator: number): number {
  const generatorDegree = 31 - Math.clz32(generator);
  let remainder = shifted;
  for (let bit = totalBits - 1; bit >= generatorDegree; bit--) {
    if ((remainder >>> bit) & 1) remainder ^= generator << (bit - generatorDegree);
  }
  return remainder;
}

/** Everything about a version that does not depend on the data; built once per version. */
interface Layout {
  size: number;
  /** Function patterns and version information drawn; format areas light, data modules light. */
  functionModules: Uint8Array;
  /** Module indexes (y · size + x) in the order codeword bits fill them, remainder bits included. */
  dataModuleOrder: Uint16Array;
  /** For each mask, 1 on every data module that mask inverts. */
  maskPatterns: Uint8Array[];
}

const layoutCache = new Map<number, Layout>();
function getLayout(version: number): Layout {
  let layout = layoutCache.get(version);
  if (!layout) {
    layout = buildLayout(version);
    layoutCache.set(version, layout);
  }
  return layout;
}

function buildLayout(version: number): Layout {
  const size = version * 4 + 17;
  const functionModules = new Uint8Array(size * size);
  const reserved = new Uint8Array(size * size);
  const setFunctionModule = (x: number, y: number, dark: boolean): void => {
    functionModules[y * size + x] = dark ? 1 : 0;
    reserved[y * size + x] = 1;
  };

  // 6.3.5: timing patterns along row 6 and column 6, dark on even coordinates.
  for (let index = 0; index < size; index++) {
    setFunctionModule(6, index, index % 2 === 0);
    setFunctionModule(index, 6, index % 2 === 0);
  }
  // 6.3.3 and 6.3.4: finder patterns (7 × 7 rings, 3 × 3 core) in three corners, with light separators.
  for (const [centreX, centreY] of [[3, 3], [size - 4, 3], [3, size - 4]] as const) {
    for (let dy = -4; dy <= 4; dy++) {
      for (let dx = -4; dx <= 4; dx++) {
        const x = centreX + dx;
        const y = centreY + dy;
        if (x < 0 || x >= size || y < 0 || y >= size) continue;
        const ring = Math.max(Math.abs(dx), Math.abs(dy));
        setFunctionModule(x, y, ring !== 2 && ring !== 4);
      }
    }
  }
  // 6.3.6: alignment patterns (5 × 5 rings around one dark module) wherever they miss the finders.
  const positions = getAlignmentPatternPositions(version);
  const last = positions.length - 1;
  for (let row = 0; row <= last; row++) {
    for (let column = 0; column <= last; column++) {
      const onFinder = (row === 0 && column === 0) || (row === 0 && column === last) || (row === last && column === 0);
      if (onFinder) continue;
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) {
          setFunctionModule(positions[column] + dx, positions[row] + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
        }
      }
    }
  }
  // 7.9.1: reserve both copies of the format information (drawn per mask) and the dark module.
  for (let index = 0; index < 9; index++) {
    if (index !== 6) {
      setFunctionModule(8, index, false);
      setFunctionModule(index, 8, false);
    }
  }
  for (let index = 0; index < 8; index++) {
    setFunctionModule(size - 1 - index, 8, false);
    setFunctionModule(8, size - 1 - index, false);
  }
  setFunctionModule(8, size - 8, true);
  // 7.10: version information from version 7: a block 3 wide and 6 tall left of the top-right finder
  // (bit i at row ⌊i / 3⌋, column size − 11 + i mod 3), and its transpose above the bottom-left one.
  if (version >= 7) {
    const bits = getVersionBits(version);
    for (let bit = 0; bit < 18; bit++) {
      const dark = ((bits >>> bit) & 1) === 1;
      const along = size - 11 + (bit % 3);
      const across = Math.floor(bit / 3);
      setFunctionModule(along, across, dark);
      setFunctionModule(across, along, dark);
    }
  }

  // 7.7.3: codeword bits fill two-module columns from the right edge, zigzagging up then down,
  // right module before left, skipping the vertical timing pattern and every reserved module.
  const dataModuleOrder = new Uint16Array(getRawDataModuleCount(version));
  let placed = 0;
  let upward = true;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let step = 0; step < size; step++) {
      const y = upward ? size - 1 - step : step;
      for (let x = right; x >= right - 1; x--) {
        if (!reserved[y * size + x]) dataModuleOrder[placed++] = y * size + x;
      }
    }
    upward = !upward;
  }
  if (placed !== dataModuleOrder.length) {
    throw new Error(`QR layout of version ${version} has ${placed} data modules, expected ${dataModuleOrder.length}`);
  }

  // 7.8.2, Table 10: the eight data mask patterns, where the condition holds the module is inverted.
  const maskPatterns = MASK_CONDITIONS.map((condition) => {
    const pattern = new Uint8Array(size * size);
    for (const index of dataModuleOrder) {
      if (condition(index % size, Math.floor(index / size))) pattern[index] = 1;
    }
    return pattern;
  });
  return { size, functionModules, dataModuleOrder, maskPatterns };
}

// 7.8.2, Table 10: mask conditions by reference 0–7, with i the row (y) and j the column (x).
const MASK_CONDITIONS: ReadonlyArray<(x: number, y: number) => boolean> = [
  (x, y) => (y + x) % 2 === 0,
  (_x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (y + x) % 3 === 0,
  (x, y) => (Math.floor(y / 2) + Math.floor(x / 3)) % 2 === 0,
  (x, y) => ((y * x) % 2) + ((y * x) % 3) === 0,
  (x, y) => (((y * x) % 2) + ((y * x) % 3)) % 2 === 0,
  (x, y) => (((y + x) % 2) + ((y * x) % 3)) % 2 === 0,
];

// 7.7.3: codeword bits, most significant first, into the data modules in order; remainder bits stay 0.
function placeCodewords(modules: Uint8Array, codewords: Uint8Array, order: Uint16Array): void {
  const bitCount = codewords.length * 8;
  for (let bit = 0; bit < bitCount; bit++) {
    modules[order[bit]] = (codewords[bit >>> 3] >>> (7 - (bit & 7))) & 1;
  }
}

function applyMask(modules: Uint8Array, pattern: Uint8Array): void {
  for (let index = 0; index < modules.length; index++) modules[index] ^= pattern[index];
}

// 7.8.3: try every mask with its format information drawn, keep the lowest penalty (first on ties).
function chooseMask(modules: Uint8Array, layout: Layout): number {
  const candidate = new Uint8Array(modules.length);
  let bestMask = 0;
  let bestScore = Infinity;
  for (let mask = 0; mask < 8; mask++) {
    const pattern = layout.maskPatterns[mask];
    for (let index = 0; index < modules.length; index++) candidate[index] = modules[index] ^ pattern[index];
    drawFormatBits(candidate, layout.size, mask);
    const score = scorePenalty(candidate, layout.size);
    if (score < bestScore) {
      bestScore = score;
      bestMask = mask;
    }
  }
  return bestMask;
}

// 7.9.1: format bit i (0 = least significant) goes down column 8 for i = 0–7 (skipping the timing
// row) and leftwards along row 8 for i = 8–14 beside the top-left finder; the second copy runs
// along row 8 under the top-right finder for i = 0–7 and down column 8 beside the bottom-left for 8–14.
function drawFormatBits(modules: Uint8Array, size: number, mask: number): void {
  const bits = getFormatBits(mask);
  const bitAt = (index: number): number => (bits >>> index) & 1;
  for (let index = 0; index <= 5; index++) modules[index * size + 8] = bitAt(index);
  modules[7 * size + 8] = bitAt(6);
  modules[8 * size + 8] = bitAt(7);
  modules[8 * size + 7] = bitAt(8);
  for (let index = 9; index < 15; index++) modules[8 * size + (14 - index)] = bitAt(index);
  for (let index = 0; index < 8; index++) modules[8 * size + (size - 1 - index)] = bitAt(index);
  for (let index = 8; index < 15; index++) modules[(size - 15 + index) * size + 8] = bitAt(index);
}

// 7.8.3, Table 11: N1 runs of five or more, N2 2 × 2 blocks, N3 finder-like patterns, N4 balance.
// Masked data is close to random, so the loops count with arithmetic on 0/1 values rather than with
// branches a processor would mispredict half the time.
function scorePenalty(modules: Uint8Array, size: number): number {
  let score = 0;
  for (let line = 0; line < size; line++) {
    score += scoreLine(modules, line * size, 1, size);
    score += scoreLine(modules, line, size, size);
  }
  // N2: every 2 × 2 block of one colour, overlapping blocks counted separately.
  let blocks = 0;
  for (let y = 0; y < size - 1; y++) {
    for (let index = y * size, end = index + size - 1; index < end; index++) {
      const colour = modules[index];
      blocks += 1 ^ ((colour ^ modules[index + 1]) | (colour ^ modules[index + size]) | (colour ^ modules[index + size + 1]));
    }
  }
  score += blocks * PENALTY_BLOCK;
  // N4: 10 points for every full 5 % the dark share strays from 50 %.
  let dark = 0;
  for (let index = 0; index < modules.length; index++) dark += modules[index];
  const total = size * size;
  score += Math.floor(Math.abs(dark * 20 - total * 10) / total) * PENALTY_BALANCE;
  return score;
}

// N1 and N3 along one row (step 1) or column (step size), with the quiet zone light on both ends.
function scoreLine(modules: Uint8Array, start: number, step: number, length: number): number {
  let score = 0;
  let previous = 0;
  let runLength = 0; // so the first module starts a run of 1 whatever `previous` says
  let window = 0; // the last 11 modules, newest in bit 0; zeros before the line are the quiet zone
  for (let index = start, end = start + step * length; index !== end; index += step) {
    const colour = modules[index];
    // N1: a run scores 3 when it reaches five modules and 1 more for each module after.
    runLength = runLength * (1 ^ colour ^ previous) + 1;
    previous = colour;
    if (runLength >= 5) score += runLength === 5 ? PENALTY_RUN : 1;
    // N3: the pattern read with four light modules on either side.
    window = ((window << 1) | colour) & 0x7ff;
    if (window === FINDER_LIKE_LIGHT_BEFORE || window === FINDER_LIKE_LIGHT_AFTER) score += PENALTY_FINDER_LIKE;
  }
  // N3 at the far end, where the four light modules are the quiet zone.
  for (let shift = 1; shift <= 4; shift++) {
    if (((window << shift) & 0x7ff) === FINDER_LIKE_LIGHT_AFTER) score += PENALTY_FINDER_LIKE;
  }
  return score;
}

function makeQrCode(version: number, mask: number, modules: Uint8Array): QrCode {
  const size = version * 4 + 17;
  return Object.freeze({
    version,
    size,
    mask,
    isDark: (x: number, y: number): boolean => x >= 0 && x < size && y >= 0 && y < size && modules[y * size + x] === 1,
  });
}
