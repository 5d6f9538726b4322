// The getting-started checklist's items (checklist.ts shows them) and whether each is done,
// derived from the snapshot alone. Pure: no DOM.

import type { Snapshot } from '../../src/core/api';

interface ChecklistItem {
  id: 'demo' | 'repository' | 'tracker' | 'webhooks' | 'phone';
  title: string;
  hint: string;
  /** Where it is done. */
  href: string;
  done: boolean;
}

/**
 * The items and whether each is done, from the snapshot alone. `remotePage`: this page is itself
 * a browser signed in through remote access, so a device is paired.
 */
export function checklistItems(snapshot: Snapshot, remotePage: boolean): ChecklistItem[] {
  // The Demo project is the folder Factory made in its data folder; a repository is any other.
  const inDataFolder = (path: string) => path === snapshot.dataDir || path.startsWith(`${snapshot.dataDir.replace(/[\\/]+$/, '')}/`);
  const demo = snapshot.pipelines.find((pipeline) => pipeline.name === 'Demo' && snapshot.projects.some((project) => project.id === pipeline.projectId && inDataFolder(project.path)));
  return [
    { id: 'demo', title: 'Run the demo', hint: 'A first run without any agent: a step, a decision, a report.',
      href: demo ? `#/pipelines/${encodeURIComponent(demo.id)}` : '#/pipelines',
      done: snapshot.runs.some((run) => run.status === 'succeeded' && (!demo || run.pipelineId === demo.id)) },
    { id: 'repository', title: 'Add your repository', hint: 'A project is a folder pipelines run in.',
      href: '#/projects', done: snapshot.projects.some((project) => !inDataFolder(project.path)) },
    { id: 'tracker', title: 'Connect Linear, GitHub or Jira', hint: 'An account lets triggers read issues and report back.',
      href: '#/settings?section=accounts', done: snapshot.accounts.length > 0 },
    { id: 'webhooks', title: 'Turn on webhooks', hint: 'Issues reach your triggers the moment they change.',
      href: '#/settings?section=webhook', done: snapshot.settings.webhookServer.enabled },
    { id: 'phone', title: 'Pair your phone', hint: 'Approve steps from anywhere: remote access, then scan the code.',
      href: '#/settings?section=remote', done: remotePage || snapshot.remote.running },
  ];
}
