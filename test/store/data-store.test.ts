import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DataStore } from '../../src/store/data-store';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const dataStore = suite('data-store');

let root = '';
dataStore.before.each(() => {
  root = makeTempDir('factory-data-store');
});
dataStore.after.each(() => {
  removeTempDir(root);
});

dataStore('a new data folder is private, its parents are made as usual, and the layout is there', async () => {
  const dir = join(root, 'share', 'factory');
  const store = new DataStore(dir);
  await store.open();
  for (const folder of ['runs', 'triggers', 'worktrees', 'projects']) assert.ok(statSync(join(dir, folder)).isDirectory(), folder);
  if (process.platform === 'win32') return;
  assert.is(statSync(dir).mode & 0o777, 0o700);
  assert.is(statSync(join(root, 'share')).mode & 0o077, 0o777 & ~process.umask() & 0o077, 'the parent gets the usual mode');
});

dataStore('an existing data folder keeps its permissions', async () => {
  if (process.platform === 'win32') return;
  const dir = join(root, 'shared-factory');
  mkdirSync(dir, { mode: 0o750 });
  await new DataStore(dir).open();
  assert.is(statSync(dir).mode & 0o777, 0o750 & ~process.umask());
});

dataStore.run();
