// The built-in pipelines (DESIGN §4 "First start" and "Templates"; spec: createPipelineFromTemplate).
// With a GitHub account, `feature`, `bugfix` and `review` end with a pull request (after an approval
// in the first two); without one, the work stays local (a commit on the run's branch).

import { pipelineTemplateIds, type Pipeline, type PipelineInput, type PipelineTemplateId, type Step } from './api';
import { ValidationError } from './errors';
import { validatePipeline } from './pipeline';
import { shown } from './validate';

const localCommit = (message: string): Step => ({
  id: 'commit', name: 'Commit', kind: 'shell', command: `git add -A\ngit diff --cached --quiet && echo "Nothing to commit." || git commit -m "${message}"`,
});
/**
 * A template's test step: `npm test` where there is a package.json with a test script, else a line
 * saying no tests were found, so a template runs on any folder (the Demo project has no
 * package.json) instead of failing with ENOENT. Exit status: npm's, or 0 when there are no tests.
 */
export const testCommand = [
  `if [ -f package.json ] && grep -q '"test"[[:space:]]*:' package.json; then`,
  '  npm test',
  'else',
  '  echo "No tests found: there is no package.json with a test script here. Put your test command in this step."',
  'fi',
].join('\n');
const testStep: Step = { id: 'test', name: 'Test', kind: 'shell', command: testCommand };
const pullRequest = (connectionId: string): Step => ({ id: 'pull-request', name: 'Pull request', kind: 'pullRequest', connectionId });

/** The built-in pipelines (DESIGN §4): `demo` runs without any agent, for a first run at once. */
const templates: Record<PipelineTemplateId, Omit<PipelineInput, 'projectId'>> = {
  demo: {
    name: 'Demo',
    description: 'Shows how a run works without any agent: a shell step, a decision, and a step that uses it.',
    variables: {},
    steps: [
      { id: 'prepare', name: 'Prepare', kind: 'shell', command: 'echo "Working on {{issue.title}}"' },
      {
        id: 'choose', name: 'Choose', kind: 'approval',
        message: 'How should we go on with "{{issue.title}}"?',
        choices: { mode: 'single', options: ['Ship it', 'Polish first', 'Start over'] },
      },
      {
        id: 'report', name: 'Report', kind: 'shell',
        command: 'echo "You chose: {{steps.choose.selected}}"\necho "Your comment: {{steps.choose.comment}}"',
      },
    ],
  },
  feature: {
    name: 'Feature',
    description: 'An agent implements the issue, the tests run, and a person approves before the commit.',
    variables: {},
    steps: [
      {
        id: 'implement', name: 'Implement', kind: 'agent',
        prompt: 'Implement this feature in the repository.\n\nTitle: {{issue.title}}\n\n{{issue.description}}\n\n'
          + 'Follow the style of the code around it, keep the change focused, and add or update tests for it.',
      },
      testStep,
      {
        id: 'review', name: 'Review', kind: 'approval',
        message: 'The tests pass for "{{issue.title}}". Review the changes in {{workspace}}; approve to commit them.',
      },
      localCommit('Feature: {{issue.title}}'),
    ],
  },
  bugfix: {
    name: 'Bug fix',
    description: 'An agent reproduces the bug with a failing test, another fixes it, the tests run, and a person approves.',
    variables: {},
    steps: [
      {
        id: 'reproduce', name: 'Reproduce', kind: 'agent',
        prompt: 'Reproduce this bug with a test that fails because of it. Do not fix the bug yet.\n\n'
          + 'Title: {{issue.title}}\n\n{{issue.description}}\n\nEnd with the name of the test and how it fails.',
      },
      {
        id: 'fix', name: 'Fix', kind: 'agent',
        prompt: 'Fix this bug so that the failing test passes, without weakening the test.\n\n'
          + 'Title: {{issue.title}}\n\n{{issue.description}}\n\nWhat reproducing it found:\n{{steps.reproduce.output}}',
      },
      testStep,
      {
        id: 'review', name: 'Review', kind: 'approval',
        message: 'The fix for "{{issue.title}}" passes the tests. Review the changes in {{workspace}}.',
      },
    ],
  },
  review: {
    name: 'Review',
    description: 'Answers the review comments of a pull request Factory opened: an agent addresses them, the tests run, and the pull request gets the new commits.',
    variables: {},
    steps: [
      {
        id: 'address', name: 'Address the review', kind: 'agent',
        prompt: 'Address the review: {{issue.description}}\n\nPull request: {{issue.url}}\n\nChange only what the review asks for, and keep the tests passing.',
      },
      testStep,
      localCommit('Address the review of {{issue.key}}'),
    ],
  },
  blank: {
    name: 'Blank',
    variables: {},
    steps: [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo "Hello from {{project.name}}"' }],
  },
};

/**
 * A new pipeline of project `projectId` made from a built-in template (ids as in
 * `pipelineTemplateIds`), with a fresh `pl_` id and both times `now`. Throws ValidationError
 * naming the valid ids for an unknown template, or when `projectId` is empty.
 */
export function pipelineFromTemplate(templateId: PipelineTemplateId, projectId: string, now: number, githubConnectionId?: string): Pipeline {
  if (!pipelineTemplateIds.includes(templateId)) {
    throw new ValidationError([{ field: 'templateId', message: `There is no template ${shown(templateId)}: use one of ${pipelineTemplateIds.join(', ')}` }]);
  }
  const template = templates[templateId];
  return validatePipeline({ ...template, steps: githubConnectionId ? withPullRequest(templateId, template.steps, githubConnectionId) : template.steps, projectId }, { projectIds: [projectId], harnessIds: [] }, now);
}

/** The template's steps ending with a pull request: in place of the local commit, after the approval (review: after the tests). */
function withPullRequest(templateId: PipelineTemplateId, steps: Step[], connectionId: string): Step[] {
  if (templateId !== 'feature' && templateId !== 'bugfix' && templateId !== 'review') return steps;
  return [...steps.filter((step) => step.id !== 'commit'), pullRequest(connectionId)];
}
