// The templates' test step (src/core/pipeline-templates.ts) runs on any folder: npm test where
// there is a test script, "No tests found" (exit 0) where there is none, as on the Demo project.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pipelineFromTemplate, testCommand } from '../../src/core/pipeline-templates';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const templates = suite('template test step');
const run = (cwd: string) => spawnSync('/bin/sh', ['-c', testCommand], { cwd, encoding: 'utf8' });

templates('feature, bugfix and review use the test step that checks for tests first', () => {
  for (const id of ['feature', 'bugfix', 'review'] as const) {
    assert.is((pipelineFromTemplate(id, 'prj_0123456789abcdef', 1).steps.find((step) => step.id === 'test') as { command?: string } | undefined)?.command, testCommand, id);
  }
});

templates('a folder without package.json says no tests were found and passes', () => {
  const folder = makeTempDir('template-tests');
  try {
    const result = run(folder);
    assert.is(result.status, 0, result.stderr);
    assert.match(result.stdout, /^No tests found: there is no package\.json with a test script here/);
  } finally {
    removeTempDir(folder);
  }
});

templates('a package.json without a test script is no tests either', () => {
  const folder = makeTempDir('template-tests');
  try {
    writeFileSync(join(folder, 'package.json'), '{"name": "app", "scripts": {"build": "tsc"}}');
    const result = run(folder);
    assert.is(result.status, 0, result.stderr);
    assert.match(result.stdout, /No tests found/);
  } finally {
    removeTempDir(folder);
  }
});

templates('a test script runs with npm test, and its failure fails the step', () => {
  const folder = makeTempDir('template-tests');
  try {
    writeFileSync(join(folder, 'package.json'), '{"name": "app", "scripts": {"test": "echo the-tests-ran && exit 3"}}');
    const result = run(folder);
    assert.match(result.stdout, /the-tests-ran/);
    assert.is.not(result.status, 0);
  } finally {
    removeTempDir(folder);
  }
});

templates.run();
