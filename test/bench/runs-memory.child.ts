// Starts Factory on a data folder in a fresh process, as a user's start does, and prints one JSON
// line: { startMs, rss, heapUsed } after a full collection, so the memory is what the loaded runs
// (and Factory itself) keep, not the garbage of reading them or of the process that wrote them.
// argv: <data folder>
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startFactory } from '../../src/app';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const dataDir = process.argv[2]!;
const started = performance.now();
const factory = await startFactory({ dataDir, platform: 'web', uiRoot: 'dist/ui' });
const startMs = performance.now() - started;
const listed = (await factory.api.listRuns({ limit: 10_000 })).length;
collectGarbage();
await new Promise((resolve) => setTimeout(resolve, 100));
collectGarbage();
const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
await factory.stop();
console.log(JSON.stringify({ startMs, rss, heapUsed, heapTotal, external, listed }));
