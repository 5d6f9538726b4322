// Reliability under load: a Factory receiving a few thousand webhook deliveries (10% duplicates) is
// killed with SIGKILL mid-load, started again, and everything is sent again. Every key that got a
// 201 has exactly one run, no key has two, and every file in the data folder parses.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Run } from '../../src/core/api';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { approval } from '../helpers/factory';
import { freePort, send } from '../helpers/net';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const childPath = new URL('../engine/factory.child.mjs', import.meta.url).pathname;
const reliability = suite('webhook reliability');

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

reliability('SIGKILL mid-load, restart, resend: one run per key, and every file parses', async () => {
  const dir = makeTempDir('factory-reliability');
  let factory: ChildFactory | undefined;
  try {
    factory = await startChildFactory(childPath, dir);
    const { projects } = await factory.call('snapshot');
    const pipeline = await factory.call('savePipeline', { projectId: projects[0]!.id, name: 'Gate', variables: {}, steps: [approval('gate', 'Go?')] });
    const trigger = await factory.call('saveTrigger', { name: 'Load', kind: 'webhook', enabled: true, pipelineId: pipeline.id });
    const port = await freePort();
    await factory.call('saveSettings', { webhookServer: { enabled: true, port } });

    const uniqueKeys = Array.from({ length: 1800 }, (_, index) => `LOAD-${index}`);
    const deliveries = [...uniqueKeys];
    for (let index = 0; index < 200; index++) deliveries.splice(200 + index * 8, 0, uniqueKeys[index * 7]!); // 10% repeats of earlier keys
    const created = new Set<string>();
    const url = `http://127.0.0.1:${port}/hooks/${trigger.id}?token=${trigger.webhookSecret}`;
    const deliverAll = async (keys: string[], killAfter?: number) => {
      let next = 0;
      let sent = 0;
      const worker = async () => {
        while (next < keys.length) {
          const key = keys[next++]!;
          sent++;
          if (killAfter !== undefined && sent === killAfter) factory!.child.kill('SIGKILL');
          const answer = await send(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title: `Issue ${key}`, key }) }).catch(() => undefined);
          if (answer?.status === 201) created.add(answer.json().issue);
        }
      };
      await Promise.all(Array.from({ length: 20 }, worker));
    };

    await deliverAll(deliveries, 800);
    await factory.kill('SIGKILL');
    const createdBeforeKill = created.size;
    factory = await startChildFactory(childPath, dir);
    await deliverAll(deliveries);

    const runs: Run[] = await factory.call('listRuns', { limit: 10_000 });
    const perKey = new Map<string, number>();
    for (const run of runs) perKey.set(run.issue!.key!, (perKey.get(run.issue!.key!) ?? 0) + 1);
    const doubled = [...perKey].filter(([, count]) => count > 1);
    assert.equal(doubled, [], 'no key has two runs');
    for (const key of created) assert.is(perKey.get(key), 1, `key ${key} got a 201 and has exactly one run`);
    assert.equal([...perKey.keys()].sort(), [...uniqueKeys].sort(), 'after the resend every key has its run');
    assert.ok(createdBeforeKill > 0 && createdBeforeKill < uniqueKeys.length, `${createdBeforeKill} runs created before the kill`);

    await factory.kill('SIGKILL');
    factory = undefined;
    for (const file of filesUnder(dir)) {
      const text = readFileSync(file, 'utf8');
      if (file.endsWith('.json')) JSON.parse(text);
      else if (file.endsWith('.jsonl')) {
        const lines = text.split('\n');
        const complete = text.endsWith('\n') ? lines.slice(0, -1) : lines.slice(0, -1); // a torn last line is allowed
        for (const line of complete) if (line) JSON.parse(line);
      }
    }
    // Killed again with run.json files still to write: the journals bring every run back.
    factory = await startChildFactory(childPath, dir);
    const again: Run[] = await factory.call('listRuns', { limit: 10_000 });
    assert.equal(again.map((run) => run.issue!.key!).sort(), [...uniqueKeys].sort(), 'a second start has every run once');
  } finally {
    await factory?.kill('SIGKILL');
    removeTempDir(dir);
  }
});

reliability.run();
