// The hash routes: a path pattern and the screen it shows. `navigate` paths use these too.
import type { ScreenFactory } from './app';
import { channelsScreen } from './views/channels';
import { harnessesScreen } from './views/harnesses';
import { inboxScreen } from './views/inbox';
import { pipelineEditorScreen } from './views/pipeline-editor';
import { pipelinesScreen } from './views/pipelines';
import { projectsScreen } from './views/projects';
import { runScreen } from './views/run';
import { runsScreen } from './views/runs';
import { settingsScreen } from './views/settings';
import { triggersScreen } from './views/triggers';
import { waitingScreen } from './views/waiting';

export const routes: [string, ScreenFactory][] = [
  ['#/runs', runsScreen],
  ['#/runs/:id', runScreen],
  ['#/pipelines', pipelinesScreen],
  ['#/pipelines/:id', pipelineEditorScreen],
  ['#/projects', projectsScreen],
  ['#/triggers', triggersScreen],
  ['#/harnesses', harnessesScreen],
  ['#/channels', channelsScreen],
  ['#/inbox', inboxScreen],
  ['#/settings', settingsScreen],
  ['#/waiting', waitingScreen],
];
