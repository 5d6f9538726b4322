// Temporary folders for tests: made fresh, removed after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeTempDir(name = 'factory-test'): string {
  return mkdtempSync(join(tmpdir(), `${name}-`));
}

export function removeTempDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/** Waits until `predicate` is true, checking every 10 ms; fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
