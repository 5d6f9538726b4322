// Draws a QR Code as a small SVG document: one white rectangle and one path of dark modules.
// The result goes into the desktop page through innerHTML, so it holds only the elements made here:
// no text, no script, and colours are checked against a strict pattern before they are used.
import type { QrCode } from './qr';

interface QrSvgOptions {
  /** Light modules around the symbol, an integer from 0 to 64; default 4, the standard's minimum. */
  quietZone?: number;
  /** Pixels per module for the width and height attributes, a number above 0 up to 100; default 8. */
  moduleSize?: number;
  /** Fill of the dark modules: `#rgb`, `#rrggbb` (with optional alpha), `rgb()`, `rgba()` or a colour name; default `#000`. */
  dark?: string;
  /** Fill of the background, in the same forms; default `#fff`. */
  light?: string;
}

const DEFAULT_QUIET_ZONE = 4;
const DEFAULT_MODULE_SIZE = 8;
const MAX_QUIET_ZONE = 64;
const MAX_MODULE_SIZE = 100;
const SAFE_COLOUR = /^(?:#[0-9a-f]{3,8}|[a-z]+|rgba?\([0-9.,%\s]+\))$/i;

/**
 * An SVG document of the symbol with its quiet zone: the viewBox counts modules, width and height
 * count pixels, `shape-rendering="crispEdges"` keeps module edges sharp. Horizontal runs of dark
 * modules merge into one rectangle each. Throws RangeError for an option out of range.
 */
export function qrToSvg(code: QrCode, options: QrSvgOptions = {}): string {
  const quietZone = options.quietZone ?? DEFAULT_QUIET_ZONE;
  const moduleSize = options.moduleSize ?? DEFAULT_MODULE_SIZE;
  const dark = checkColour(options.dark ?? '#000', 'dark');
  const light = checkColour(options.light ?? '#fff', 'light');
  if (!(Number.isInteger(quietZone) && quietZone >= 0 && quietZone <= MAX_QUIET_ZONE)) {
    throw new RangeError(`QR quiet zone must be an integer from 0 to ${MAX_QUIET_ZONE} modules, not ${quietZone}`);
  }
  if (!(Number.isFinite(moduleSize) && moduleSize > 0 && moduleSize <= MAX_MODULE_SIZE)) {
    throw new RangeError(`QR module size must be a number above 0 up to ${MAX_MODULE_SIZE} pixels, not ${moduleSize}`);
  }
  const extent = code.size + 2 * quietZone;
  const pixels = Number((extent * moduleSize).toFixed(3));
  const runs: string[] = [];
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; x++) {
      if (!code.isDark(x, y)) continue;
      const start = x;
      while (x + 1 < code.size && code.isDark(x + 1, y)) x++;
      const length = x - start + 1;
      runs.push(`M${start + quietZone},${y + quietZone}h${length}v1h-${length}z`);
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${extent} ${extent}" width="${pixels}" height="${pixels}" shape-rendering="crispEdges">` +
    `<rect width="${extent}" height="${extent}" fill="${light}"/>` +
    `<path d="${runs.join('')}" fill="${dark}"/>` +
    `</svg>`
  );
}

function checkColour(colour: string, name: string): string {
  if (typeof colour !== 'string' || !SAFE_COLOUR.test(colour)) {
    throw new RangeError(`QR ${name} colour must be #hex, rgb(), rgba() or a colour name, not ${JSON.stringify(colour)}`);
  }
  return colour;
}
