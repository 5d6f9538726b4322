// What polling a big Jira project costs: a fake Jira Cloud (a real REST server on 127.0.0.1, in
// this process, evaluating the JQL itself) with 5,000 issues the query matches and 1,000 it does
// not, and a real Factory. Prints the first full poll (time, requests, runs started, memory) and
// an incremental poll with 10 changed issues. Runs wait in the queue behind one long shell step,
// so the figures are the poll's.
import { FakeJira } from '../fakes/jira';
import { shell, startTestFactory } from '../helpers/factory';

const matching = 5000;
const others = 1000;

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

const fake = await FakeJira.start({ mode: 'cloud' });
const factory = await startTestFactory({ overrides: { maxParallelRuns: 1 }, triggerTuning: { firstPollDelayMs: 3600_000 } });
try {
  const issues = [];
  fake.clock = Date.now() - 30 * 24 * 3600_000; // a project with history: issues made over the last month
  for (let index = 0; index < matching + others; index++) {
    issues.push(fake.addIssue({ summary: `Issue ${index}: the login page breaks on Safari`, labels: index % 6 === 5 ? ['later'] : ['agent'], description: 'Steps to reproduce:\n1. Open the page\n2. Sign in\n'.repeat(4), priority: 'High' }));
  }
  const account = await factory.api.saveConnection({ kind: 'jira', name: 'Acme', baseUrl: fake.url, email: fake.email, token: fake.token });
  const blocker = await factory.pipeline([shell('hold', 'sleep 600')], { name: 'Blocker' });
  await factory.api.startRun({ pipelineId: blocker.id });
  const pipeline = await factory.pipeline([shell('work', 'echo "{{issue.key}}"')], { name: 'Work' });
  const trigger = await factory.api.saveTrigger({ name: 'Agent', kind: 'jira', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { query: 'project = KAN AND labels = agent AND statusCategory != Done' } });

  const measure = async (label: string) => {
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const calls = fake.calls.length;
    const started = performance.now();
    const state = await factory.api.pollTrigger(trigger.id);
    const ms = performance.now() - started;
    console.log(`${label}: ${ms.toFixed(ms < 100 ? 1 : 0)} ms, ${fake.calls.length - calls} requests, ${state.processedCount} runs in all, RSS +${megabytes(process.memoryUsage().rss - rss)} (${megabytes(process.memoryUsage().rss)} in all), error: ${state.lastError ?? 'none'}`);
  };
  await measure(`first full poll: JQL matching ${matching} of ${matching + others} issues`);
  fake.clock = Date.now();
  for (const issue of issues.slice(0, 10)) fake.update(issue, { summary: `${issue.summary} (edited)` });
  await measure('incremental poll, 10 changed');
  await measure('incremental poll, nothing changed');
} finally {
  await factory.close();
  await fake.stop();
}
