import { RunStore } from '../../src/store/run-store';
import { FileWriter } from '../../src/store/writer';
import { JsonlAppender } from '../../src/store/jsonl';
const dir = process.env.PROBE_DIR!;
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const r = await new RunStore(dir, new FileWriter(), new JsonlAppender()).loadAll();
  console.log(r.runs.length, (performance.now() - t).toFixed(0), 'ms');
}
