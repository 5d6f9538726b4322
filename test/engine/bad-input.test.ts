// Bad input through the API: NUL characters and deep nesting are refused where they enter, with
// the field named, instead of failing later (at spawn, or with a stack overflow).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError } from '../../src/core/errors';
import { rejects } from '../helpers/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';

const bad = suite<{ factory: TestFactory }>('bad input');

bad.before.each(async (context) => {
  context.factory = await startTestFactory();
});
bad.after.each(async (context) => {
  await context.factory.close();
});

/** The field paths a refusal carries beside its words. */
const fieldsOf = (error: Error): string[] => (error instanceof ValidationError ? error.issues.map((issue) => issue.field) : []);

bad('savePipeline and saveProject refuse NUL, naming the field', async ({ factory }) => {
  await rejects(factory.pipeline([shell('build', 'make\0')]), /^Step 1: the command .*NUL/m);
  await rejects(factory.pipeline([shell('build', 'make')], { name: 'Ship\0' }), /^The name .*NUL/m);
  const project = (await factory.api.snapshot()).projects[0]!;
  assert.equal(fieldsOf(await rejects(factory.api.saveProject({ ...project, name: 'Demo\0' }), /^The name .*NUL/m)), ['name']);
  assert.equal(fieldsOf(await rejects(factory.api.saveProject({ ...project, path: `${project.path}\0` }), /^The folder .*NUL/m)), ['path']);
  assert.equal(fieldsOf(await rejects(factory.api.saveProject({ ...project, setupCommand: 'npm ci\0' }), /^The setup command .*NUL/m)), ['setupCommand']);
});

bad('startRun refuses NUL in the issue and variables, naming the field', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('build', 'echo "{{issue.title}}"')]);
  assert.equal(fieldsOf(await rejects(factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'Fix\0' } }), /^The issue title .*NUL/m)), ['issue.title']);
  assert.equal(fieldsOf(await rejects(factory.api.startRun({ pipelineId: pipeline.id, variables: { x: '\0' } }), /^The variable `x` .*NUL/m)), ['variables.x']);
  assert.is((await factory.api.listRuns()).length, 0);
});

bad('startRun refuses an issue.raw nested 100,000 levels deep with a message, not a stack overflow', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('build', 'true')]);
  const raw: Record<string, unknown> = {};
  let current = raw;
  for (let level = 1; level < 100_000; level += 1) current = (current.a = {}) as Record<string, unknown>;
  const error = await rejects(factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'Deep', raw } }), /^The webhook body is nested deeper than 100 levels/m);
  assert.not.match(error.message, /call stack/);
  assert.is((await factory.api.listRuns()).length, 0);
});

bad.run();
