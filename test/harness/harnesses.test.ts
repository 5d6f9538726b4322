// The harness service over a real data folder, and the command lines it builds, checked against
// the fake CLIs in test/fakes/bin run as real processes.
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { HarnessDefinition } from '../../src/core/api';
import { isId } from '../../src/core/ids';
import { ConfigService, builtInHarnessIds } from '../../src/engine/config';
import { runProcess } from '../../src/engine/process';
import { builtInHarnesses } from '../../src/harness/builtins';
import { HarnessService, type HarnessServiceOptions } from '../../src/harness/harnesses';
import { buildInvocation } from '../../src/harness/invocation';
import { DataStore } from '../../src/store/data-store';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const fakes = join(process.cwd(), 'test/fakes/bin');
const nodeFolder = dirname(process.execPath);
const formats = ['text', 'claude-stream-json', 'codex-json', 'gemini-stream-json', 'opencode-json', 'cursor-stream-json', 'amp-stream-json'];

interface Context {
  dir: string;
  store: DataStore;
  config: ConfigService;
  service: (options?: HarnessServiceOptions) => HarnessService;
}

const harnesses = suite<Context>('harnesses');

harnesses.before.each(async (context) => {
  context.dir = makeTempDir('factory-harness');
  context.store = new DataStore(join(context.dir, 'data'));
  await context.store.open();
  context.config = await ConfigService.open(context.store);
  context.service = (options = {}) => new HarnessService(context.config, formats, {
    environment: { PATH: `${fakes}:${nodeFolder}` }, searchFolders: [], workingFolder: context.dir, ...options,
  });
});

harnesses.after.each(async (context) => {
  await context.config.idle();
  await context.store.close();
  removeTempDir(context.dir);
});

const custom = (fields: Partial<HarnessDefinition> = {}) => ({
  name: 'My agent', command: 'my-agent', args: ['--quiet', '{{prompt}}'], promptVia: 'arg', output: 'text', ...fields,
});

// ─── Definitions ───

harnesses('the built-in ids match the ids the configuration knows', () => {
  assert.equal(builtInHarnesses.map((harness) => harness.id), [...builtInHarnessIds]);
});

harnesses('list applies stored overrides to the built-ins and appends custom harnesses', async ({ config, service }) => {
  await config.update((file) => ({ config: { ...file, harnessOverrides: { codex: { name: 'My Codex', models: ['o3'] } } }, result: undefined }));
  const harness = service();
  const created = await harness.saveHarness(custom());
  const list = harness.list();
  assert.equal(list.map((entry) => entry.id), [...builtInHarnessIds, created.id]);
  const codex = list.find((entry) => entry.id === 'codex')!;
  assert.equal(codex.name, 'My Codex');
  assert.equal(codex.models, ['o3']);
  assert.equal(codex.args, builtInHarnesses[1]!.args, 'fields without override keep the default');
  assert.ok(codex.builtIn);
});

harnesses('saving a built-in stores only the fields that differ from its default', async ({ config, service }) => {
  const harness = service();
  const claude = harness.get('claude');
  const saved = await harness.saveHarness({ ...claude, models: ['opus'], env: { CLAUDE_CONFIG_DIR: '/tmp/x' } });
  assert.equal(saved.models, ['opus']);
  assert.equal(config.current.harnessOverrides, { claude: { models: ['opus'], env: { CLAUDE_CONFIG_DIR: '/tmp/x' } } });
  await harness.saveHarness({ ...claude, env: {} });
  assert.equal(config.current.harnessOverrides, {}, 'saving the defaults back leaves no override');
});

harnesses('clearing the models command of a built-in is stored and survives a reload', async ({ config, store, service }) => {
  await service().saveHarness({ id: 'opencode', modelsArgs: [] });
  assert.equal(config.current.harnessOverrides, { opencode: { modelsArgs: [] } });
  const reopened = new HarnessService(await ConfigService.open(store), formats);
  assert.is(reopened.get('opencode').modelsArgs, undefined);
});

harnesses('a custom harness gets an hrn_ id and defaults, and is stored whole', async ({ config, service }) => {
  const saved = await service().saveHarness(custom());
  assert.ok(isId(saved.id, 'hrn'), saved.id);
  assert.is(saved.builtIn, false);
  assert.is(saved.enabled, true);
  assert.equal(saved.versionArgs, ['--version']);
  assert.equal(config.current.customHarnesses, [saved]);
  const renamed = await service().saveHarness({ id: saved.id, name: 'Renamed' });
  assert.equal(renamed, { ...saved, name: 'Renamed' });
});

harnesses('saving an unknown id is refused', async ({ service }) => {
  await rejects(service().saveHarness({ ...custom(), id: 'hrn_missing' }), /No harness with id `hrn_missing`/);
});

harnesses('deleting a built-in resets it; deleting a custom harness removes it', async ({ config, service }) => {
  const harness = service();
  await harness.saveHarness({ id: 'gemini', name: 'Gemini (work)' });
  const created = await harness.saveHarness(custom());
  await harness.deleteHarness('gemini');
  assert.equal(config.current.harnessOverrides, {});
  assert.is(harness.get('gemini').name, 'Gemini CLI');
  await harness.deleteHarness(created.id);
  assert.equal(config.current.customHarnesses, []);
  await rejects(harness.deleteHarness(created.id), /No harness with id/);
});

harnesses('a custom harness that a pipeline uses is not deleted', async ({ config, service }) => {
  const created = await service().saveHarness(custom());
  await config.update((file) => ({ config: { ...file, pipelines: file.pipelines.map((pipeline) => ({ ...pipeline, harnessId: created.id })) }, result: undefined }));
  await rejects(service().deleteHarness(created.id), /is used by the pipeline/);
});

harnesses('validation names the field: unknown format, missing {{prompt}}, empty command', async ({ service }) => {
  const harness = service();
  await rejects(harness.saveHarness(custom({ output: 'xml-stream' })), /^The output format `xml-stream` is unknown/m);
  await rejects(harness.saveHarness(custom({ args: ['--quiet'] })), /^The arguments need exactly one line that is `\{\{prompt\}\}`/m);
  await rejects(harness.saveHarness(custom({ args: ['--prompt={{prompt}}'] })), /^The arguments need exactly one line/m);
  await rejects(harness.saveHarness(custom({ promptVia: 'stdin' })), /^The arguments hold `\{\{prompt\}\}`, but the prompt goes in on stdin/m);
  await rejects(harness.saveHarness(custom({ command: '  ' })), /^The command is empty/m);
  await rejects(harness.saveHarness(custom({ args: ['{{prompt}}', '{{modle}}'] })), /The arguments use an unknown placeholder `\{\{modle\}\}`/);
  await rejects(harness.saveHarness(custom({ args: ['a\0b', '{{prompt}}'] })), /^The arguments hold a NUL/m);
  await rejects(harness.saveHarness({ id: 'claude', output: 'nope' }), /^The output format `nope` is unknown/m);
});

harnesses('enabling and disabling is stored; a disabled harness is not detected', async ({ config, service }) => {
  const harness = service();
  await harness.setHarnessEnabled('amp', false);
  assert.equal(config.current.harnessOverrides, { amp: { enabled: false } });
  const status = await harness.detectHarnesses();
  assert.is(status.amp, undefined);
  await harness.setHarnessEnabled('amp', true);
  assert.equal(config.current.harnessOverrides, {});
  await rejects(harness.setHarnessEnabled('amp', 'yes'), /^The switch must be true or false, not `yes`/m);
  await rejects(harness.setHarnessEnabled('nobody', true), /No harness with id `nobody`/);
});

// ─── Detection ───

harnesses('detection finds every built-in on PATH and reads its version line', async ({ service }) => {
  const harness = service();
  const status = await harness.detectHarnesses();
  assert.equal(status.claude, { installed: true, path: join(fakes, 'claude'), version: '2.1.211 (Claude Code)' });
  assert.equal(status.codex, { installed: true, path: join(fakes, 'codex'), version: 'codex-cli 0.121.0' });
  assert.equal(status.cursor, { installed: true, path: join(fakes, 'agent'), version: '2025.11.25-d5b3271' });
  for (const id of builtInHarnessIds) assert.ok(status[id]?.installed && status[id]?.version, id);
  assert.equal(harness.status(), status, 'the latest result is kept for the snapshot');
});

harnesses('detection looks in the search folders when PATH lacks the CLI', async ({ service }) => {
  const status = await service({ environment: { PATH: nodeFolder }, searchFolders: ['/nonexistent/bin', fakes] }).detectHarnesses();
  assert.equal(status.amp, { installed: true, path: join(fakes, 'amp'), version: '0.0.1763712345-g1a2b3c' });
});

harnesses('a missing CLI is reported as not installed', async ({ service }) => {
  const harness = service({ environment: { PATH: nodeFolder } });
  await harness.saveHarness(custom({ command: 'factory-no-such-cli' }));
  const status = await harness.detectHarnesses();
  assert.is(status.claude!.installed, false);
  assert.match(status.claude!.error!, 'Claude Code is not installed: `claude` was not found on PATH or in the usual folders; install it with `npm install -g @anthropic-ai/claude-code`');
  for (const builtIn of builtInHarnesses) assert.ok(builtIn.install, `${builtIn.id} says how to install it`);
  const customStatus = Object.entries(status).find(([id]) => id.startsWith('hrn_'))![1];
  assert.is(customStatus.installed, false);
  assert.match(customStatus.error!, /`factory-no-such-cli` was not found/);
});

harnesses('Cursor is found under its legacy name cursor-agent', async ({ dir, service }) => {
  const legacy = join(dir, 'legacy');
  mkdirSync(legacy);
  symlinkSync(join(fakes, 'agent'), join(legacy, 'cursor-agent'));
  const status = await service({ environment: { PATH: `${legacy}:${nodeFolder}` } }).detectHarnesses();
  assert.equal(status.cursor, { installed: true, path: join(legacy, 'cursor-agent'), version: '2025.11.25-d5b3271' });
});

harnesses('a hanging CLI is reported as timed out instead of blocking detection', async ({ service }) => {
  const status = await service({ environment: { PATH: `${fakes}:${nodeFolder}`, FAKE_HANG: '1' }, versionTimeoutMs: 300 }).detectHarnesses();
  for (const id of builtInHarnessIds) assert.equal(status[id], { installed: true, path: status[id]!.path!, error: 'timed out' }, id);
});

harnesses('a slow CLI that answers within the timeout is detected', async ({ service }) => {
  const status = await service({ environment: { PATH: `${fakes}:${nodeFolder}`, FAKE_SLOW_MS: '100' } }).detectHarnesses();
  assert.is(status.gemini!.version, '0.9.0');
});

// ─── Models ───

harnesses('listModels runs the models command of an unsaved definition', async ({ service }) => {
  const harness = service();
  const unsaved = { name: 'draft', command: 'opencode', modelsArgs: ['models'], models: ['ignored'] };
  assert.equal(await harness.listModels(unsaved), ['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'opencode/grok-code']);
  assert.equal(await harness.listModels(harness.get('cursor')), ['auto', 'sonnet-4.5', 'gpt-5']);
});

harnesses('listModels without a models command returns the listed models', async ({ service }) => {
  assert.equal(await service().listModels({ command: 'claude', models: ['sonnet', 'opus'] }), ['sonnet', 'opus']);
});

harnesses('listModels reports a models command that fails or is missing', async ({ service }) => {
  await rejects(service().listModels({ command: 'factory-no-such-cli', modelsArgs: ['models'] }), /`factory-no-such-cli` was not found/);
  await rejects(service().listModels({ command: '/bin/sh', modelsArgs: ['-c', 'echo broken >&2; exit 3'] }), /failed \(exit code 3\): broken/);
  await rejects(service().listModels({ command: '', modelsArgs: ['models'] }), /^The command is empty/m);
});

harnesses('refreshModels saves the models into the override or the custom harness', async ({ config, service }) => {
  const harness = service();
  const opencode = await harness.refreshModels('opencode');
  assert.equal(opencode.models, ['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'opencode/grok-code']);
  assert.equal(config.current.harnessOverrides.opencode, { models: opencode.models });
  const created = await harness.saveHarness(custom({ command: 'agent', modelsArgs: ['models'] }));
  const refreshed = await harness.refreshModels(created.id);
  assert.equal(config.current.customHarnesses[0]!.models, ['auto', 'sonnet-4.5', 'gpt-5']);
  assert.equal(refreshed.models, ['auto', 'sonnet-4.5', 'gpt-5']);
});

// ─── Invocation ───

const byId = (id: string) => builtInHarnesses.find((harness) => harness.id === id)!;
const request = { prompt: 'Fix the bug', systemPrompt: 'Be brief', model: 'm1' };

harnesses('every built-in gets its exact command line, prompt on stdin unless it takes it as an argument', () => {
  const expected: Record<string, [string, string[], string | undefined]> = {
    claude: ['claude', ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits', '--model', 'm1', '--append-system-prompt', 'Be brief'], 'Fix the bug'],
    codex: ['codex', ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-m', 'm1', '-'], 'Fix the bug'],
    gemini: ['gemini', ['--approval-mode', 'auto_edit', '-m', 'm1', '-o', 'stream-json'], 'Fix the bug'],
    opencode: ['opencode', ['run', '--model', 'm1', '--format', 'json'], 'Fix the bug'],
    cursor: ['agent', ['-p', '--output-format', 'stream-json', '--model', 'm1', '--force', '--', 'Fix the bug'], undefined],
    amp: ['amp', ['-x', '--stream-json', '--dangerously-allow-all'], 'Fix the bug'],
  };
  for (const [id, [command, args, stdin]] of Object.entries(expected)) {
    const invocation = buildInvocation(byId(id), request);
    assert.equal(invocation, stdin === undefined ? { command, args } : { command, args, stdin }, id);
  }
});

harnesses('an empty model or system prompt drops its flag pair', () => {
  assert.equal(buildInvocation(byId('claude'), { prompt: 'x' }).args, ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits']);
  assert.equal(buildInvocation(byId('codex'), { prompt: 'x', model: '' }).args, ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-']);
  assert.equal(buildInvocation(byId('cursor'), { prompt: 'x' }).args, ['-p', '--output-format', 'stream-json', '--force', '--', 'x']);
});

harnesses('values are inserted once: placeholders inside them stay text', () => {
  const invocation = buildInvocation(byId('cursor'), { prompt: 'say {{model}}', model: '{{prompt}}' });
  assert.equal(invocation.args, ['-p', '--output-format', 'stream-json', '--model', '{{prompt}}', '--force', '--', 'say {{model}}']);
});

harnesses('a value that looks like a flag is joined to its long flag, and refused after a short one', async () => {
  assert.equal(buildInvocation(byId('claude'), { prompt: 'x', systemPrompt: '-v' }).args.at(-1), '--append-system-prompt=-v');
  assert.throws(() => buildInvocation(byId('codex'), { prompt: 'x', model: '-rf' }), /^The model `-rf` starts with `-`/m);
  assert.throws(() => buildInvocation(byId('cursor'), { prompt: 'a\0b' }), /^The prompt holds a NUL/m);
});

async function echo(invocation: { command: string; args: string[]; stdin?: string }, cwd: string) {
  const result = await runProcess({
    command: invocation.command, args: invocation.args, cwd, stdin: invocation.stdin,
    env: { PATH: `${fakes}:${nodeFolder}`, FAKE_ECHO_ARGV: '1' }, timeoutMs: 30_000,
  });
  assert.is(result.exitCode, 0, result.spawnError);
  return JSON.parse(result.output) as { argv: string[]; stdin: string };
}

harnesses('a prompt that starts with - reaches the CLI as data, not as a flag', async ({ dir }) => {
  for (const prompt of ['--help', '-rf /', '--version']) {
    const cursor = await echo(buildInvocation(byId('cursor'), { prompt, model: 'auto' }), dir);
    assert.equal(cursor.argv.slice(-2), ['--', prompt]);
    const claude = await echo(buildInvocation(byId('claude'), { prompt }), dir);
    assert.is(claude.stdin, prompt);
    assert.not.ok(claude.argv.includes(prompt));
  }
});

harnesses('a custom argument harness without -- gets one before a prompt that starts with -', async ({ dir }) => {
  const definition = { command: 'amp', args: ['-x', '{{prompt}}'], promptVia: 'arg' as const };
  assert.equal((await echo(buildInvocation(definition, { prompt: '-rf /' }), dir)).argv, ['-x', '--', '-rf /']);
  assert.equal((await echo(buildInvocation(definition, { prompt: 'plain words' }), dir)).argv, ['-x', 'plain words']);
});

harnesses.run();
