// Linear triggers across a crash: a Factory in a child process killed with SIGKILL after Linear
// created the run's comment but before Factory heard its id, then started again on the same folder.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeLinear } from '../fakes/linear';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { approval, shell } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const childPath = new URL('../engine/factory.child.mjs', import.meta.url).pathname;
const restart = suite('linear restart');

restart('a crash after the comment is created: restart and finish leave exactly one comment; dedup and exits survive', async () => {
  const dir = makeTempDir('factory-linear-restart');
  const fake = await FakeLinear.start();
  let factory: ChildFactory | undefined;
  let release = () => {};
  try {
    factory = await startChildFactory(childPath, dir);
    const port = await freePort();
    await factory.call('saveSettings', { webhookServer: { enabled: true, port } });
    const { projects } = await factory.call('snapshot');
    const pipeline = await factory.call('savePipeline', { projectId: projects[0]!.id, name: 'Gated', variables: {}, steps: [shell('plan', 'echo planning'), approval('review', 'Ship it?')] });
    const account = await factory.call('saveConnection', { kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
    const trigger = await factory.call('saveTrigger', { name: 'Agent', kind: 'linear', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { team: 'ENG', labels: ['agent'] }, writeBack: { comment: true } });
    const issue = fake.addIssue({ title: 'Survive a crash', labels: ['agent'] });
    const leaving = fake.addIssue({ title: 'Leaves while Factory is down', labels: ['agent'] });
    fake.hold((call) => call.fields.includes('commentCreate') && JSON.stringify(call.variables).includes(issue.id), new Promise((resolve) => (release = resolve)));

    await factory.call('pollTrigger', trigger.id);
    await waitFor(() => fake.commentsOn(issue).length === 1, 10_000, 'Linear to have created the comment');
    const [first] = await factory.call('listRuns', { search: issue.identifier });
    // The approval's inbox item is announced once the waiting run is on disk.
    await waitFor(async () => (await factory!.call('snapshot')).inbox.some((item) => item.kind === 'run.waiting' && item.runId === first!.id), 10_000, 'the run to wait');
    await factory.kill('SIGKILL');
    release();

    fake.update(leaving, { labels: [] });
    factory = await startChildFactory(childPath, dir);
    const [run] = await factory.call('listRuns', { search: issue.identifier });
    assert.is(run?.status, 'waiting', 'the run survived, waiting');
    await waitFor(() => fake.commentsOn(issue)[0]!.body.includes('waiting for approval'), 10_000, 'the found comment to be brought up to date');
    await factory.call('approveStep', run!.id, 'review', true);
    await waitFor(() => fake.commentsOn(issue)[0]!.body.includes('succeeded'), 10_000, 'the finished comment');
    assert.is(fake.commentsOn(issue).length, 1, 'exactly one comment');
    assert.is(fake.callsOf('commentCreate').filter((call) => JSON.stringify(call.variables).includes(issue.id)).length, 1, 'found again, not made again');

    // Dedup was rebuilt from the runs: a poll starts nothing for the processed issues; the one that
    // left the filter while Factory was down is seen leaving, and starts a new run when it is back.
    await factory.call('pollTrigger', trigger.id);
    assert.is((await factory.call('listRuns')).length, 2);
    fake.update(leaving, { labels: ['agent'] });
    await factory.call('pollTrigger', trigger.id);
    assert.is((await factory.call('listRuns', { search: leaving.identifier })).length, 2, 'the issue that came back started again');
    await factory.kill('SIGKILL');
    factory = await startChildFactory(childPath, dir);
    await factory.call('pollTrigger', trigger.id);
    assert.is((await factory.call('listRuns')).length, 3, 'nothing new after another restart');
  } finally {
    release();
    await factory?.kill('SIGKILL').catch(() => undefined);
    await fake.stop();
    removeTempDir(dir);
  }
});

restart.run();
