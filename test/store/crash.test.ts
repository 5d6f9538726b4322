// A real crash: a child process rewrites a file in a loop and is killed with SIGKILL at a random
// moment. After every kill the file must hold one complete version, never older than the last
// version the child reported durable. (SIGKILL keeps the page cache, so this proves atomicity
// against a dying process, not against a power cut; the fsyncs are checked in atomic.test.ts.)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checksum } from './rewrite-loop.child';

const crash = suite('crash');
const childPath = fileURLToPath(new URL('./rewrite-loop.child.mjs', import.meta.url));
const rounds = 40;

let folder = '';
crash.before.each(async () => {
  folder = await fs.mkdtemp(join(tmpdir(), 'factory-crash-'));
});
crash.after.each(async () => {
  await fs.rm(folder, { recursive: true, force: true });
});

const tempFiles = async () => (await fs.readdir(folder)).filter((name) => name.endsWith('.tmp'));

/**
 * Starts the child, kills it 10–60 ms after it first reports a version, and resolves with the
 * last version it reported before the kill.
 */
function runAndKill(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childPath, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    let lastBeforeKill = 0;
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (killed) return;
      const started = output === '';
      output += chunk;
      const complete = output.slice(0, output.lastIndexOf('\n')).split('\n').filter(Boolean);
      if (complete.length > 0) lastBeforeKill = Number(complete.at(-1));
      if (started) {
        setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, 10 + Math.random() * 50);
      }
    });
    child.stderr.on('data', (chunk) => (errors += chunk));
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (signal === 'SIGKILL') resolve(lastBeforeKill);
      else reject(new Error(`the child exited by itself (${signal ?? _code}): ${errors}`));
    });
  });
}

crash('a process killed mid-rewrite leaves one complete version, never an older one', async () => {
  const file = join(folder, 'state.json');
  let previous = 0;
  for (let round = 0; round < rounds; round += 1) {
    const reported = await runAndKill(file);
    const onDisk = JSON.parse(await fs.readFile(file, 'utf8')) as { version: number; padding: string; check: string };
    assert.is(onDisk.check, checksum(onDisk.version, onDisk.padding), `round ${round}: version ${onDisk.version} is not self-consistent`);
    assert.is(onDisk.padding.length, 50_000);
    assert.ok(onDisk.version >= reported, `round ${round}: the child reported ${reported} durable but the file holds ${onDisk.version}`);
    assert.ok(onDisk.version > previous, `round ${round}: the file went back from ${previous} to ${onDisk.version}`);
    previous = onDisk.version;
    const leftovers = await tempFiles();
    assert.ok(leftovers.length <= 1, `round ${round}: temp files piled up: ${leftovers.join(', ')}`);
  }
  const clean = spawn(process.execPath, [childPath, file, '--clean'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exitCode = await new Promise((resolve) => clean.on('exit', resolve));
  assert.is(exitCode, 0);
  assert.equal(await tempFiles(), [], 'a restart removes what the crashes left');
});

crash.run();
