// Draws a QR Code for a terminal with Unicode half blocks: each text line holds two module rows.
import type { QrCode } from './qr';

interface QrTerminalOptions {
  /** Light modules around the symbol, an integer from 0 to 64; default 4, the standard's minimum. */
  quietZone?: number;
  /**
   * Default true: every line is wrapped in black-on-white ANSI colours and reset at its end, so the
   * code scans on dark and light terminals alike. False gives plain blocks for dark modules, which
   * reads correctly only on a light background.
   */
  color?: boolean;
}

const DEFAULT_QUIET_ZONE = 4;
const MAX_QUIET_ZONE = 64;
const BLACK_ON_WHITE = '\x1b[30;47m';
const RESET = '\x1b[0m';
// Indexed by (top dark ? 2 : 0) + (bottom dark ? 1 : 0).
const HALF_BLOCKS = [' ', '▄', '▀', '█'] as const;

/**
 * The symbol with its quiet zone as text lines joined by `\n`, with no newline at the end. The last
 * line's lower half is light when the row count is odd. Throws RangeError for a bad quiet zone.
 */
export function qrToTerminal(code: QrCode, options: QrTerminalOptions = {}): string {
  const quietZone = options.quietZone ?? DEFAULT_QUIET_ZONE;
  const color = options.color ?? true;
  if (!(Number.isInteger(quietZone) && quietZone >= 0 && quietZone <= MAX_QUIET_ZONE)) {
    throw new RangeError(`QR quiet zone must be an integer from 0 to ${MAX_QUIET_ZONE} modules, not ${quietZone}`);
  }
  const lines: string[] = [];
  // isDark is false outside the symbol, which draws the quiet zone.
  for (let y = -quietZone; y < code.size + quietZone; y += 2) {
    let line = '';
    for (let x = -quietZone; x < code.size + quietZone; x++) {
      const bottomDark = y + 1 < code.size + quietZone && code.isDark(x, y + 1);
      line += HALF_BLOCKS[(code.isDark(x, y) ? 2 : 0) + (bottomDark ? 1 : 0)];
    }
    lines.push(color ? BLACK_ON_WHITE + line + RESET : line);
  }
  return lines.join('\n');
}
