// What polling a big GitHub repository costs: a fake GitHub (a real REST server on 127.0.0.1, in
// this process) with 3,000 open issues (and 300 pull requests, which are skipped), and a real
// Factory. Prints the first full poll (time, requests, runs started, memory), an incremental poll
// with 10 changed issues, and an idle poll answered 304 (which GitHub does not count).
// Runs wait in the queue behind one long shell step, so the figures are the poll's.
import { FakeGitHub } from '../fakes/github';
import { shell, startTestFactory } from '../helpers/factory';

const openIssues = 3000;
const repo = 'acme/app';

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

const fake = await FakeGitHub.start();
fake.rateLimit.limit = fake.rateLimit.remaining = 1_000_000;
const factory = await startTestFactory({ overrides: { maxParallelRuns: 1 }, triggerTuning: { firstPollDelayMs: 3600_000 } });
try {
  fake.addRepo(repo);
  const issues = [];
  for (let index = 0; index < openIssues; index++) {
    issues.push(fake.addIssue(repo, { title: `Issue ${index}: the login page breaks on Safari`, labels: ['agent'], body: 'Steps to reproduce:\n1. Open the page\n2. Sign in\n'.repeat(4) }));
    if (index % 10 === 0) fake.addIssue(repo, { title: `Pull request ${index}`, pullRequest: true });
  }
  const account = await factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token });
  const blocker = await factory.pipeline([shell('hold', 'sleep 600')], { name: 'Blocker' });
  await factory.api.startRun({ pipelineId: blocker.id });
  const pipeline = await factory.pipeline([shell('work', 'echo "{{issue.key}}"')], { name: 'Work' });
  const trigger = await factory.api.saveTrigger({ name: 'Agent', kind: 'github', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { repo, labels: ['agent'] } });

  const measure = async (label: string) => {
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const calls = fake.calls.length;
    const remaining = fake.rateLimit.remaining;
    const started = performance.now();
    const state = await factory.api.pollTrigger(trigger.id);
    const ms = performance.now() - started;
    const statuses = fake.calls.slice(calls).map((call) => call.status).join(',');
    console.log(`${label}: ${ms.toFixed(ms < 100 ? 1 : 0)} ms, ${fake.calls.length - calls} requests (statuses ${statuses.length > 40 ? statuses.slice(0, 40) + '…' : statuses}), rate limit used ${remaining - fake.rateLimit.remaining}, ${state.processedCount} runs in all, RSS +${megabytes(process.memoryUsage().rss - rss)}, error: ${state.lastError ?? 'none'}`);
  };
  await measure(`first full poll of ${openIssues} open issues`);
  for (const issue of issues.slice(0, 10)) fake.update(issue, { title: `${issue.title} (edited)` });
  await measure('incremental poll, 10 changed');
  await measure('incremental poll, nothing changed');
  await measure('idle poll (conditional)');
} finally {
  await factory.close();
  await fake.stop();
}
