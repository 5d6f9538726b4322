// The getting-started checklist (ui/views/checklist-items.ts): each item ticks itself from the snapshot.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Snapshot } from '../../src/core/api';
import { checklistItems } from '../../ui/views/checklist-items';

const checklist = suite('getting-started checklist');

/** A first start: the Demo project in the data folder, its pipeline, nothing else. */
function firstStart(): Snapshot {
  return {
    settings: { webhookServer: { enabled: false, host: '127.0.0.1', port: 7717 }, remoteAccess: { enabled: false, host: '127.0.0.1', port: 7718 } },
    projects: [{ id: 'prj_demo', name: 'Demo', path: '/data/projects/demo', worktrees: false }],
    pipelines: [{ id: 'pl_demo', name: 'Demo', projectId: 'prj_demo' }],
    accounts: [], runs: [], remote: { enabled: false, running: false }, dataDir: '/data',
  } as unknown as Snapshot;
}
const done = (snapshot: Snapshot, remotePage = false) => checklistItems(snapshot, remotePage).filter((item) => item.done).map((item) => item.id);

checklist('nothing is done on a first start on the desktop', () => {
  assert.equal(done(firstStart()), []);
  assert.is(checklistItems(firstStart(), false)[0]!.href, '#/pipelines/pl_demo');
});

checklist('the demo is done when a run of the Demo pipeline succeeded, not when it only started', () => {
  const snapshot = firstStart();
  snapshot.runs = [{ id: 'run_1', pipelineId: 'pl_demo', status: 'waiting' }] as Snapshot['runs'];
  assert.equal(done(snapshot), []);
  snapshot.runs[0]!.status = 'succeeded';
  assert.equal(done(snapshot), ['demo']);
});

checklist('a project outside the data folder is your repository; the demo folder is not', () => {
  const snapshot = firstStart();
  snapshot.projects.push({ id: 'prj_app', name: 'App', path: '/data-app', worktrees: true });
  assert.equal(done(snapshot), ['repository'], 'a sibling path that only starts with the data folder’s name counts');
});

checklist('an account, the webhook server and remote access tick the rest', () => {
  const snapshot = firstStart();
  snapshot.accounts = [{ id: 'con_1', kind: 'linear', name: 'Linear' }] as Snapshot['accounts'];
  snapshot.settings.webhookServer.enabled = true;
  snapshot.remote.running = true;
  assert.equal(done(snapshot), ['tracker', 'webhooks', 'phone']);
  assert.equal(done(firstStart(), true), ['phone'], 'a page signed in through remote access is a paired device');
});

checklist.run();
