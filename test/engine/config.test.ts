// The configuration methods of FactoryApi, through createApi on a real data folder.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startFactory, type Factory } from '../../src/app';
import type { Pipeline, Snapshot } from '../../src/core/api';
import type { ValidationError } from '../../src/core/errors';
import { ConfigService } from '../../src/engine/config';
import { DataStore, type ConfigFile } from '../../src/store/data-store';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

interface Context {
  dir: string;
  factory: Factory;
}

const config = suite<Context>('config');

config.before.each(async (context) => {
  context.dir = makeTempDir('factory-config');
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui' });
});

config.after.each(async (context) => {
  await context.factory.stop();
  removeTempDir(context.dir);
});

function readConfigFile(dir: string): ConfigFile {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
}

config('a first start creates the Demo project and a demo pipeline that needs no agent', async ({ factory, dir }) => {
  const snapshot = await factory.api.snapshot();
  assert.equal(snapshot.projects.map((project) => project.name), ['Demo']);
  assert.ok(existsSync(snapshot.projects[0]!.path), 'the Demo folder exists');
  assert.equal(snapshot.pipelines.length, 1);
  const demo = snapshot.pipelines[0]!;
  assert.equal(demo.projectId, snapshot.projects[0]!.id);
  assert.not.ok(demo.steps.some((step) => step.kind === 'agent'));
  assert.ok(demo.steps.some((step) => step.kind === 'approval' && step.choices && step.choices.options.length > 1));
  assert.equal(readConfigFile(dir).pipelines[0]!.id, demo.id, 'written to config.json');
});

config('a second start reads the saved configuration instead of creating another demo', async (context) => {
  const first = await context.factory.api.snapshot();
  await context.factory.stop();
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui' });
  const second = await context.factory.api.snapshot();
  assert.equal(second.projects, first.projects);
  assert.equal(second.pipelines, first.pipelines);
});

config('the snapshot carries every key of DESIGN §3', async ({ factory, dir }) => {
  const snapshot = await factory.api.snapshot();
  const keys: (keyof Snapshot)[] = ['settings', 'projects', 'pipelines', 'accounts', 'triggers', 'triggerStates', 'harnesses',
    'harnessStatus', 'channels', 'runs', 'inbox', 'dataDir', 'version', 'webhookUrl', 'remote'];
  for (const key of keys) assert.ok(key in snapshot, `snapshot.${key}`);
  assert.is(snapshot.dataDir, dir);
  assert.match(snapshot.version, /^\d+\.\d+\.\d+/);
  assert.is(snapshot.webhookUrl, null);
  assert.equal(snapshot.settings.webhookServer, { enabled: false, host: '127.0.0.1', port: 7717 });
  assert.equal(snapshot.settings.remoteAccess.port, 7718);
  assert.is(snapshot.settings.maxParallelRuns, 2);
});

config('saveSettings changes only the parts it is given and keeps them across a restart', async (context) => {
  const saved = await context.factory.api.saveSettings({ webhookServer: { port: 8123 }, maxParallelRuns: 4 });
  assert.equal(saved.webhookServer, { enabled: false, host: '127.0.0.1', port: 8123 });
  assert.is(saved.maxParallelRuns, 4);
  await context.factory.stop();
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui' });
  assert.is((await context.factory.api.snapshot()).settings.webhookServer.port, 8123);
});

config('saveSettings reports every bad field at once and changes nothing', async ({ factory, dir }) => {
  const before = readFileSync(join(dir, 'config.json'), 'utf8');
  const error = await rejects(factory.api.saveSettings({ webhookServer: { port: 70000, host: 'a b' }, maxParallelRuns: 0 } as never), /^The webhook server port/m);
  assert.match(error.message, /^The webhook server address/m);
  assert.match(error.message, /^The maximum of parallel runs/m);
  assert.equal((error as ValidationError).issues.map((issue) => issue.field), ['webhookServer.host', 'webhookServer.port', 'maxParallelRuns']);
  assert.is(readFileSync(join(dir, 'config.json'), 'utf8'), before);
  assert.is((await factory.api.snapshot()).settings.maxParallelRuns, 2);
  await rejects(factory.api.saveSettings('nope' as never), /settings object/);
});

config('flags given at start apply to that start without being written', async (context) => {
  await context.factory.stop();
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui', overrides: { webhookServer: { enabled: true, port: 9999 } } });
  const { settings } = await context.factory.api.snapshot();
  assert.equal(settings.webhookServer, { enabled: true, host: '127.0.0.1', port: 9999 });
  assert.equal(readConfigFile(context.dir).settings.webhookServer.port, 7717);
  // Other changes write the configuration without the flags; saving the settings keeps what the user saw.
  const folder = join(context.dir, 'flagged');
  mkdirSync(folder);
  await context.factory.api.saveProject({ name: 'Flagged', path: folder, worktrees: false });
  assert.equal(readConfigFile(context.dir).settings.webhookServer, { enabled: false, host: '127.0.0.1', port: 7717 });
  assert.ok(readConfigFile(context.dir).projects.some((project) => project.name === 'Flagged'));
  assert.is((await context.factory.api.snapshot()).settings.webhookServer.port, 9999, 'the flag still applies to this start');
  await context.factory.api.saveSettings({ maxParallelRuns: 3 });
  assert.equal(readConfigFile(context.dir).settings.webhookServer, { enabled: true, host: '127.0.0.1', port: 9999 });
});

config('projects: an empty id creates, an id updates, a missing folder or unknown id is refused', async ({ factory, dir }) => {
  const folder = join(dir, 'repo');
  mkdirSync(folder);
  const created = await factory.api.saveProject({ id: '', name: 'Repo', path: folder, worktrees: false });
  assert.match(created.id, /^prj_[0-9a-f]{16}$/);
  const updated = await factory.api.saveProject({ ...created, name: 'Renamed', setupCommand: 'npm ci' });
  assert.is(updated.id, created.id);
  const snapshot = await factory.api.snapshot();
  assert.equal(snapshot.projects.find((project) => project.id === created.id), { ...created, name: 'Renamed', setupCommand: 'npm ci' });
  await rejects(factory.api.saveProject({ name: 'Gone', path: join(dir, 'missing'), worktrees: false }), /folder .*missing.* does not exist/);
  await rejects(factory.api.saveProject({ id: 'prj_0000000000000000', name: 'X', path: folder, worktrees: false }), /No project with id `prj_0000000000000000`/);
  await rejects(factory.api.saveProject({ name: '', path: 'relative', worktrees: 'yes' } as never), /^The name[\s\S]*^The folder[\s\S]*^The worktree switch/m);
  assert.is((await factory.api.snapshot()).projects.length, 2);
});

config('deleteProject fails while the project has pipelines, and works once they are gone', async ({ factory }) => {
  const { projects, pipelines } = await factory.api.snapshot();
  await rejects(factory.api.deleteProject(projects[0]!.id), /still has 1 pipeline \(Demo\)/);
  await factory.api.deletePipeline(pipelines[0]!.id);
  await factory.api.deleteProject(projects[0]!.id);
  assert.equal((await factory.api.snapshot()).projects, []);
  await rejects(factory.api.deleteProject(projects[0]!.id), /No project/);
});

config('savePipeline refuses an invalid pipeline with a message naming the step and field, and writes nothing', async ({ factory, dir }) => {
  const { pipelines } = await factory.api.snapshot();
  const demo = pipelines[0]!;
  const before = readFileSync(join(dir, 'config.json'), 'utf8');
  const broken = { ...demo, steps: demo.steps.map((step) => (step.kind === 'shell' ? { ...step, command: '' } : step)) };
  const error = await rejects(factory.api.savePipeline(broken), /^Step 1: the command is empty/m);
  assert.is(error.name, 'ValidationError');
  assert.equal((error as ValidationError).issues[0]!.field, `steps.${demo.steps[0]!.id}.command`, 'the field path beside the words');
  assert.is(readFileSync(join(dir, 'config.json'), 'utf8'), before);
  assert.equal((await factory.api.snapshot()).pipelines, pipelines);
});

config('savePipeline answers the warnings with the pipeline and stores none; code places are refused; checkPipeline saves nothing', async ({ factory, dir }) => {
  const projectId = (await factory.api.snapshot()).projects[0]!.id;
  const input = { projectId, name: 'Warned', variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell' as const, command: 'sh -c "make {{issue.title}}"' }] };
  const saved = await factory.api.savePipeline(input);
  assert.equal(saved.warnings!.map((warning) => warning.field), ['steps.build.command']);
  assert.match(saved.warnings![0]!.message, 'the command has `{{issue.title}}`, which is parsed as code again by `sh -c`');
  const stored = readConfigFile(dir).pipelines.find((pipeline) => pipeline.id === saved.id)!;
  assert.not.ok('warnings' in stored, 'config.json holds no warnings');
  assert.not.ok('warnings' in (await factory.api.snapshot()).pipelines.find((pipeline) => pipeline.id === saved.id)!);
  assert.equal((await factory.api.savePipeline({ ...input, id: saved.id, steps: [{ ...input.steps[0]!, command: 'make "{{issue.title}}"' }] })).warnings, []);

  const before = readFileSync(join(dir, 'config.json'), 'utf8');
  await rejects(factory.api.savePipeline({ ...input, steps: [{ ...input.steps[0]!, command: 'echo $(( {{issue.title}} + 1 ))' }] }),
    /^Step 1: the command has `\{\{issue\.title\}\}`, which stands inside \$\(\( \)\), where the shell runs text as code/);
  const exported = JSON.stringify({ servicePipeline: 1, name: 'Imported', variables: {}, steps: [{ id: 'count', name: 'Count', kind: 'shell', command: 'a[{{vars.n}}]=1' }] });
  await rejects(factory.api.importPipeline(exported), /^Step 1: the command has `\{\{vars\.n\}\}`, which stands inside an array subscript/);

  const check = await factory.api.checkPipeline({ ...input, name: '', steps: [
    { id: 'count', name: 'Count', kind: 'shell', command: 'let "{{vars.n}}"' },
    { id: 'quoted', name: 'Quoted', kind: 'shell', command: "echo '{{issue.title}}'" },
  ] });
  assert.equal(check.problems.map((problem) => problem.field), ['name', 'steps.count.command']);
  assert.equal(check.warnings.map((warning) => warning.field), ['steps.quoted.command']);
  assert.equal(await factory.api.checkPipeline(input), { problems: [], warnings: saved.warnings });
  assert.is(readFileSync(join(dir, 'config.json'), 'utf8'), before, 'nothing refused or checked was written');
});

config('savePipeline creates with a new id and updates in place, keeping createdAt', async ({ factory }) => {
  const { pipelines } = await factory.api.snapshot();
  const { id: _id, createdAt: _created, updatedAt: _updated, ...input } = pipelines[0]!;
  const created = await factory.api.savePipeline({ ...input, name: 'Second' });
  assert.match(created.id, /^pl_/);
  assert.is.not(created.id, pipelines[0]!.id);
  const renamed = await factory.api.savePipeline({ ...created, name: 'Second, renamed' });
  assert.is(renamed.id, created.id);
  assert.is(renamed.createdAt, created.createdAt);
  assert.equal((await factory.api.snapshot()).pipelines.map((pipeline) => pipeline.name), ['Demo', 'Second, renamed']);
  await rejects(factory.api.savePipeline({ ...created, id: 'pl_00000000000000ff' }), /No pipeline with id/);
});

config('every template makes a valid pipeline; an unknown template is refused', async ({ factory }) => {
  for (const template of ['demo', 'feature', 'bugfix', 'blank'] as const) {
    const pipeline = await factory.api.createPipelineFromTemplate(template);
    assert.ok(pipeline.steps.length > 0, template);
    const again = await factory.api.savePipeline(pipeline);
    assert.equal(again.steps, pipeline.steps);
  }
  await rejects(factory.api.createPipelineFromTemplate('deploy' as never), /Unknown pipeline template `deploy`: choose one of demo, feature, bugfix, review, blank/);
  await rejects(factory.api.createPipelineFromTemplate('demo', 'prj_00000000000000aa'), /No project/);
});

config('duplicatePipeline makes a copy named with " (copy)" and new ids', async ({ factory }) => {
  const { pipelines } = await factory.api.snapshot();
  const copy = await factory.api.duplicatePipeline(pipelines[0]!.id);
  assert.is(copy.name, 'Demo (copy)');
  assert.is.not(copy.id, pipelines[0]!.id);
  assert.equal(copy.steps, pipelines[0]!.steps);
  await rejects(factory.api.duplicatePipeline('pl_nope'), /No pipeline with id `pl_nope`/);
});

config('deletePipeline fails while a trigger uses it', async (context) => {
  await context.factory.stop();
  const file = readConfigFile(context.dir);
  const pipeline = file.pipelines[0]!;
  file.triggers.push({ id: 'trg_00000000000000aa', name: 'Inbound', kind: 'webhook', enabled: true, pipelineId: pipeline.id });
  writeFileSync(join(context.dir, 'config.json'), JSON.stringify(file));
  context.factory = await startFactory({ dataDir: context.dir, platform: 'web', uiRoot: 'dist/ui' });
  await rejects(context.factory.api.deletePipeline(pipeline.id), /used by the trigger `Inbound`/);
  assert.is((await context.factory.api.snapshot()).pipelines.length, 1);
});

config('export carries the marker and no ids; import gives an equal pipeline with new ids', async ({ factory }) => {
  const { pipelines } = await factory.api.snapshot();
  const text = await factory.api.exportPipeline(pipelines[0]!.id);
  const parsed = JSON.parse(text);
  assert.is(parsed.servicePipeline, 1);
  assert.not.ok('id' in parsed);
  assert.not.ok('projectId' in parsed);
  const imported = await factory.api.importPipeline(text);
  assert.is.not(imported.id, pipelines[0]!.id);
  assert.is(imported.name, pipelines[0]!.name);
  assert.equal(imported.steps, pipelines[0]!.steps);
  await rejects(factory.api.importPipeline(JSON.stringify({ ...parsed, servicePipeline: 2 })), /version 2/);
  await rejects(factory.api.importPipeline('just some text'), /JSON/);
  await rejects(factory.api.importPipeline({} as never), /exported JSON text/);
  assert.is((await factory.api.snapshot()).pipelines.length, 2);
});

config('a burst of changes sends few snapshot events, the last one carrying the final state', async ({ factory }) => {
  const seen: Snapshot[] = [];
  const unsubscribe = factory.api.on('snapshot', (snapshot) => seen.push(snapshot));
  const { pipelines } = await factory.api.snapshot();
  for (let index = 0; index < 10; index++) await factory.api.duplicatePipeline(pipelines[0]!.id);
  await waitFor(() => seen.at(-1)?.pipelines.length === 11, 3000, 'a snapshot with all copies');
  assert.ok(seen.length <= 3, `${seen.length} snapshot events for 10 changes`);
  unsubscribe();
});

config('desktop-only methods are refused where there is no desktop; later features say so', async ({ factory }) => {
  await rejects(factory.api.remotePairing(), /remotePairing is only available on the desktop/);
  await rejects(factory.api.openExternal('https://example.com'), /only available on the desktop/);
});

config('stop flushes a change that was still being written', async (context) => {
  const { pipelines } = await context.factory.api.snapshot();
  const pending = context.factory.api.duplicatePipeline(pipelines[0]!.id);
  await context.factory.stop();
  const copy = await pending;
  assert.ok(readConfigFile(context.dir).pipelines.some((pipeline: Pipeline) => pipeline.id === copy.id));
});

const failures = suite('config write failures');

failures('a change whose write fails is refused and not applied in memory', async () => {
  const dir = makeTempDir('factory-config-fail');
  try {
    const store = new DataStore(dir);
    await store.open();
    const service = await ConfigService.open(store);
    const before = service.current;
    store.writeConfig = async () => {
      throw new Error('disk full');
    };
    try {
      await service.duplicatePipeline(before.pipelines[0]!.id);
      assert.unreachable('the write failed');
    } catch (error) {
      assert.match((error as Error).message, /disk full/);
    }
    assert.is(service.current, before);
    assert.is(readConfigFile(dir).pipelines.length, 1);
    await store.close();
  } finally {
    removeTempDir(dir);
  }
});

failures('a corrupt config.json is refused with the file named and left as it was', async () => {
  const dir = makeTempDir('factory-config-corrupt');
  try {
    writeFileSync(join(dir, 'config.json'), '{"format": 1, "settings": {');
    try {
      await startFactory({ dataDir: dir, platform: 'web', uiRoot: 'dist/ui' });
      assert.unreachable('start must fail');
    } catch (error) {
      assert.match((error as Error).message, /config\.json/);
    }
    assert.is(readFileSync(join(dir, 'config.json'), 'utf8'), '{"format": 1, "settings": {');
    writeFileSync(join(dir, 'config.json'), '[1, 2]');
    try {
      await startFactory({ dataDir: dir, platform: 'web', uiRoot: 'dist/ui' });
      assert.unreachable('start must fail');
    } catch (error) {
      assert.match((error as Error).message, /not a Factory configuration/);
    }
  } finally {
    removeTempDir(dir);
  }
});

config.run();
failures.run();
