// Runners through the API (saveRunner, deleteRunner, testRunner, the snapshot) on a real data folder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { invokeMethod } from '../../src/api';
import { startFactory, type Factory } from '../../src/app';
import type { HarnessDefinition } from '../../src/core/api';
import { testRunner, versionScript, readVersions } from '../../src/engine/runners';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';

interface Context {
  dir: string;
  factory: Factory;
}

const runners = suiteNeeding<Context>('runners', [{ command: 'bwrap', package: 'bubblewrap' }]);

runners.before.each(async (context) => {
  context.dir = makeTempDir('factory-runners');
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui' });
});

runners.after.each(async (context) => {
  await context.factory.stop();
  removeTempDir(context.dir);
});

runners('saved runners are in the snapshot after the built-in one, and in config.json', async ({ factory, dir }) => {
  const saved = await factory.api.saveRunner({ name: 'Box', kind: 'sandbox', network: false } as never);
  assert.match(saved.id, /^rnr_/);
  const snapshot = await factory.api.snapshot();
  assert.equal(snapshot.runners.map((runner) => runner.id), ['local', saved.id]);
  assert.equal(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).runners, [saved]);
  const renamed = await factory.api.saveRunner({ ...saved, name: 'Sandbox' });
  assert.is(renamed.id, saved.id);
  assert.equal((await factory.api.snapshot()).runners.map((runner) => runner.name), ['This computer', 'Sandbox']);
});

runners('the local runner cannot be changed or deleted', async ({ factory }) => {
  await rejects(factory.api.saveRunner({ id: 'local', name: 'Mine', kind: 'local' }), /built in: it cannot be changed/);
  await rejects(factory.api.deleteRunner('local'), /built in: it cannot be deleted/);
});

runners('a runner in use by a project cannot be deleted; once free it can', async ({ factory }) => {
  const runner = await factory.api.saveRunner({ name: 'Box', kind: 'sandbox' } as never);
  const project = (await factory.api.snapshot()).projects[0]!;
  await factory.api.saveProject({ ...project, runnerId: runner.id });
  await rejects(factory.api.deleteRunner(runner.id), /used by the project `Demo`: choose another runner there first/);
  await factory.api.saveProject({ ...project, runnerId: undefined });
  await factory.api.deleteRunner(runner.id);
  assert.equal((await factory.api.snapshot()).runners.map((one) => one.id), ['local']);
  await rejects(factory.api.saveProject({ ...project, runnerId: runner.id }), /does not exist/);
});

runners('the doors offer the methods through the table, with field paths for bad input', async ({ factory }) => {
  const error = await rejects(invokeMethod(factory.api, 'saveRunner', [{ name: 'X', kind: 'ssh', port: 70000 }]), /The host is empty[\s\S]*The port must be/);
  assert.equal((error as { issues?: { field: string }[] }).issues?.map((issue) => issue.field), ['host', 'port']);
  const answer = await invokeMethod(factory.api, 'testRunner', [{ name: 'X', kind: 'ssh', workDir: 'relative', host: 'h' }]) as { ok: boolean; error: string; fields: { field: string }[] };
  assert.is(answer.ok, false);
  assert.match(answer.error, 'The work folder must be an absolute path');
  assert.equal(answer.fields.map((field) => field.field), ['workDir']);
});

const fakeHarness = (id: string, command: string): HarnessDefinition => ({
  id, name: id, builtIn: false, enabled: true, command, args: [], promptVia: 'stdin', versionArgs: ['--version'], models: [], output: 'text', install: `npm install -g ${id}`,
});

runners('testRunner for local and sandbox reports git and each harness, a missing CLI with how to install it there', async () => {
  const harnesses = [fakeHarness('nodejs', 'node'), fakeHarness('ghost', 'factory-no-such-cli')];
  for (const runner of [{ id: 'local', name: 'This computer', kind: 'local' }, { name: 'Box', kind: 'sandbox' }]) {
    const result = await testRunner(runner, { harnesses });
    assert.is(result.ok, true, result.error);
    assert.match(result.details!.git!, /^git version \d/);
    assert.match(result.details!.harnesses!.nodejs!, /^v\d+\./);
    assert.match(result.details!.harnesses!.ghost!, /not installed (on this computer|in the sandbox): `factory-no-such-cli` was not found; install it there with `npm install -g ghost`/);
  }
});

runners('the version script quotes what it runs, and reads a missing git as a failure', () => {
  const script = versionScript([fakeHarness("it's", "a'b")]);
  assert.match(script, `probe 'it'\\''s' 'a'\\''b' --version`);
  assert.equal(readVersions('git\t\n', [], 'there').gitMissing, true);
});

runners.run();
