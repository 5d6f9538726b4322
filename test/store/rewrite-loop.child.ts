// Child process for crash.test.ts: rewrites one JSON file atomically, forever, until killed.
//   node rewrite-loop.child.mjs <file>          clean stale temp files, then rewrite in a loop,
//                                               printing each version once it is durable
//   node rewrite-loop.child.mjs <file> --clean  only clean stale temp files, print their count
// Versions continue from the one on disk, so they keep rising across restarts.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { removeStaleTempFiles, writeFileAtomic } from '../../src/store/atomic';

/** A version of the file: a 50 KB padding that differs per version, and a hash over both. */
export function makeVersion(version: number): { version: number; padding: string; check: string } {
  const padding = String.fromCharCode(97 + (version % 26)).repeat(50_000);
  return { version, padding, check: checksum(version, padding) };
}

export function checksum(version: number, padding: string): string {
  return createHash('sha256').update(`${version}:${padding}`).digest('hex');
}

async function main(): Promise<void> {
  const [path, flag] = process.argv.slice(2);
  if (!path) throw new Error('usage: rewrite-loop.child.mjs <file> [--clean]');
  const removed = await removeStaleTempFiles(dirname(path));
  if (flag === '--clean') {
    process.stdout.write(`removed ${removed}\n`);
    return;
  }
  let version = 0;
  try {
    version = (JSON.parse(await readFile(path, 'utf8')) as { version: number }).version;
  } catch {
    // First start: no file yet.
  }
  for (;;) {
    version += 1;
    await writeFileAtomic(path, JSON.stringify(makeVersion(version)));
    process.stdout.write(`${version}\n`);
  }
}

if (process.argv[1]?.endsWith('rewrite-loop.child.mjs')) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
