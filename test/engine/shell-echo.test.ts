// The command a shell step echoes to its log: as it runs (placeholders filled), never the template,
// with secrets masked and long values cut. The process is a fake: only the log is looked at.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ShellStep } from '../../src/core/api';
import type { TemplateContext } from '../../src/core/template';
import { commandAsRun, createShellRunner, echoLines } from '../../src/engine/shell-step';
import type { StepAttempt } from '../../src/engine/steps';

const echo = suite('shell step echo');

const template = (title: string): TemplateContext => ({
  issue: { title }, vars: { branch: 'main' }, steps: {}, run: { id: 'run_1' }, project: { name: 'Demo', path: '/p' }, workspace: '/w',
});

/** Runs `command` with a fake process and answers the first log line. */
async function echoed(command: string, title: string, secrets: string[] = []): Promise<string> {
  return (await echoedLines(command, title, secrets))[0]!;
}

/** Runs `command` with a fake process and answers the log lines before the process's (the echo). */
async function echoedLines(command: string, title: string, secrets: string[] = []): Promise<string[]> {
  const lines: string[] = [];
  const runner = createShellRunner(async () => ({ exitCode: 0, signal: null, timedOut: false, cancelled: false, output: '', durationMs: 1 }) as never);
  const step: ShellStep = { id: 'build', name: 'Build', kind: 'shell', command };
  await runner({
    runId: 'run_1', step, attempt: 1, workspace: '/w', template: template(title), environment: {}, secrets, timeoutMs: 1000,
    signal: new AbortController().signal, log: (line) => lines.push(line), output: () => undefined, record: () => {}, started: () => {},
  } as StepAttempt);
  return lines.slice(0, -1);
}

echo('shows the placeholders filled in, not the template', async () => {
  assert.is(await echoed('git checkout {{vars.branch}} && echo "{{issue.title}}"', 'Fix the login'), '$ git checkout "main" && echo "Fix the login"');
});

echo('masks a value that is one of the secrets, or holds one', async () => {
  assert.is(await echoed('echo {{issue.title}}', 'tok_12345678'), '$ echo "tok_12345678"');
  assert.is(await echoed('echo {{issue.title}}', 'tok_12345678', ['tok_12345678']), '$ echo "***"');
  assert.is(await echoed('echo {{issue.title}}', 'the key is tok_12345678', ['tok_12345678']), '$ echo "***"');
});

echo('cuts a value over 200 characters with …', async () => {
  const line = await echoed('echo {{issue.title}}', 'x'.repeat(5000));
  assert.is(line, `$ echo "${'x'.repeat(200)}…"`);
});

echo('leaves references it has no value for as they are', () => {
  assert.is(commandAsRun('echo ${FACTORY_T2} ${HOME}', { FACTORY_T1: 'a' }, []), 'echo ${FACTORY_T2} ${HOME}');
});

echo('a script is echoed line by line: `$ ` first, two spaces before each next line', async () => {
  assert.equal(await echoedLines('echo "You chose: {{issue.title}}"\necho "Your comment: "\n', 'Ship it'), ['$ echo "You chose: Ship it"', '  echo "Your comment: "']);
  assert.equal(echoLines('\n\nif true; then\r\n  make\n\nfi\n\n'), ['$ if true; then', '    make', '', '  fi']);
  assert.equal(echoLines('ls'), ['$ ls']);
});

echo.run();
