// What polling a big Linear team costs: a fake Linear (a real GraphQL server on 127.0.0.1, in
// this process) holding 5,000 matching issues and 1,000 that do not match, and a real Factory.
// Prints the first full poll (time, requests, runs started, memory) and an incremental poll with
// 10 changed issues. Each started run is durable before the poll ends; runs wait in the queue
// behind one long shell step, so the figures are the poll's, not the runs' execution.
import { FakeLinear } from '../fakes/linear';
import { shell, startTestFactory } from '../helpers/factory';

const matching = 5000;
const others = 1000;

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

const fake = await FakeLinear.start();
const factory = await startTestFactory({ overrides: { maxParallelRuns: 1 }, triggerTuning: { firstPollDelayMs: 3600_000 } });
try {
  for (let index = 0; index < matching + others; index++) {
    const match = index % 6 !== 5;
    fake.addIssue({ title: `Issue ${index}: the login page breaks on Safari`, labels: match ? ['agent'] : ['later'], description: 'Steps to reproduce:\n1. Open the page\n2. Sign in\n'.repeat(4) });
  }
  const account = await factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
  const blocker = await factory.pipeline([shell('hold', 'sleep 600')], { name: 'Blocker' });
  await factory.api.startRun({ pipelineId: blocker.id });
  const pipeline = await factory.pipeline([shell('work', 'echo "{{issue.key}}"')], { name: 'Work' });
  const trigger = await factory.api.saveTrigger({ name: 'Agent', kind: 'linear', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { team: 'ENG', labels: ['agent'] } });

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let requests = fake.calls.length;
  let started = performance.now();
  const first = await factory.api.pollTrigger(trigger.id);
  const fullMs = performance.now() - started;
  const fullRequests = fake.calls.length - requests;
  const rssAfter = process.memoryUsage().rss;
  console.log(`first full poll: ${matching} matching issues of ${matching + others} in ${fullMs.toFixed(0)} ms, ${fullRequests} requests, ${first.processedCount} runs started (durable), RSS +${megabytes(rssAfter - rssBefore)} (${megabytes(rssAfter)} in all), error: ${first.lastError ?? 'none'}`);

  for (const issue of fake.issues.slice(0, 10)) fake.update(issue, { title: `${issue.title} (edited)` });
  requests = fake.calls.length;
  started = performance.now();
  const second = await factory.api.pollTrigger(trigger.id);
  console.log(`incremental poll, 10 changed: ${(performance.now() - started).toFixed(1)} ms, ${fake.calls.length - requests} request(s), runs ${second.processedCount}, error: ${second.lastError ?? 'none'}`);

  requests = fake.calls.length;
  started = performance.now();
  await factory.api.pollTrigger(trigger.id);
  console.log(`incremental poll, nothing changed: ${(performance.now() - started).toFixed(1)} ms, ${fake.calls.length - requests} request(s)`);
} finally {
  await factory.close();
  await fake.stop();
}
