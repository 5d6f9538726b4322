// QR benchmarks (figures, not tests): encoding a 200-character pairing link (version 10), the same
// at the version-40 limit, and drawing the link's symbol as SVG and for the terminal.
import { encodeQr, type QrCode } from '../../src/core/qr';
import { qrToSvg } from '../../src/core/qr-svg';
import { qrToTerminal } from '../../src/core/qr-text';

/** Mean and 95th percentile in milliseconds over `rounds` calls, after a few warm-up calls. */
function measure(rounds: number, work: () => unknown): { mean: number; p95: number } {
  for (let warm = 0; warm < 20; warm++) work();
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { mean: times.reduce((sum, time) => sum + time, 0) / rounds, p95: times[Math.floor(rounds * 0.95)]! };
}

const format = ({ mean, p95 }: { mean: number; p95: number }) => `${mean.toFixed(3)} ms mean, ${p95.toFixed(3)} ms p95`;

let link = 'http://192.168.1.20:7718/pair?t=';
while (link.length < 200) link += 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[(link.length * 37) % 64];
const longest = 'x'.repeat(2331);

let code: QrCode = encodeQr(link);
console.log(`QR Code of a 200-character link: version ${code.version}, ${code.size} × ${code.size} modules, mask ${code.mask}`);
console.log(`  encode (8 masks scored)      ${format(measure(500, () => (code = encodeQr(link))))}`);
let svg = '';
console.log(`  qrToSvg                      ${format(measure(500, () => (svg = qrToSvg(code))))}  (${svg.length.toLocaleString('en')} characters)`);
console.log(`  qrToTerminal                 ${format(measure(500, () => qrToTerminal(code)))}`);
const big = encodeQr(longest);
console.log(`QR Code of 2331 bytes: version ${big.version}, ${big.size} × ${big.size} modules`);
console.log(`  encode (8 masks scored)      ${format(measure(100, () => encodeQr(longest)))}`);
console.log(`  qrToSvg                      ${format(measure(100, () => qrToSvg(big)))}`);
