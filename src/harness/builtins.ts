// The built-in harnesses (PROVIDERS.md §4): the coding-agent CLIs every installation knows. The
// user's changes to them are stored as overrides (only the fields that differ); these defaults
// never change at run time.
//
// Conventions the args follow (see invocation.ts):
// - `['--flag', '{{model}}']`: the pair is dropped when the value is empty, so the CLI's own
//   default model (or system prompt) applies.
// - The prompt goes on stdin wherever the CLI reads it from there; only Cursor takes it as an
//   argument, as the last element, after `--` (its parser ends options there), so a prompt such as
//   `--help` stays data.
// - `resume` (PROVIDERS.md §7) goes just before the prompt: before a final `-`, else at the end.

import type { HarnessDefinition } from '../core/api';

/** Claude Code: `--verbose` is required for stream-json in print mode; `-p` reads the prompt from stdin. */
const claude: HarnessDefinition = {
  id: 'claude',
  name: 'Claude Code',
  builtIn: true,
  enabled: true,
  command: 'claude',
  args: ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits', '--model', '{{model}}', '--append-system-prompt', '{{systemPrompt}}'],
  // Keeps the session id (no --fork-session); the transcript must be in this folder's project folder (sessions.ts).
  resume: ['--resume', '{{sessionId}}'],
  promptVia: 'stdin',
  versionArgs: ['--version'],
  // No CLI command lists models: the aliases the CLI accepts.
  models: ['sonnet', 'opus', 'haiku'],
  output: 'claude-stream-json',
  install: 'npm install -g @anthropic-ai/claude-code',
  sandboxPaths: ['~/.claude', '~/.claude.json'],
};

/** OpenAI Codex: `-` reads the prompt from stdin; without --skip-git-repo-check exec refuses non-git folders. */
const codex: HarnessDefinition = {
  id: 'codex',
  name: 'Codex',
  builtIn: true,
  enabled: true,
  command: 'codex',
  args: ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-m', '{{model}}', '-'],
  // `exec [options] resume <id> -`: exec's options stay before the subcommand (PROVIDERS.md §7).
  resume: ['resume', '{{sessionId}}'],
  promptVia: 'stdin',
  versionArgs: ['--version'],
  models: ['gpt-5-codex', 'gpt-5'],
  output: 'codex-json',
  install: 'npm install -g @openai/codex',
  sandboxPaths: ['~/.codex'],
};

/** Gemini CLI: headless when stdin is not a terminal; the prompt comes on stdin instead of `-p`. */
const gemini: HarnessDefinition = {
  id: 'gemini',
  name: 'Gemini CLI',
  builtIn: true,
  enabled: true,
  command: 'gemini',
  args: ['--approval-mode', 'auto_edit', '-m', '{{model}}', '-o', 'stream-json'],
  // Works headless; Gemini keeps sessions per project folder, so another folder may not find it (then a fresh start).
  resume: ['--resume', '{{sessionId}}'],
  promptVia: 'stdin',
  versionArgs: ['--version'],
  models: ['gemini-2.5-pro', 'gemini-2.5-flash'],
  output: 'gemini-stream-json',
  install: 'npm install -g @google/gemini-cli',
  sandboxPaths: ['~/.gemini'],
};

/**
 * opencode: `run` appends stdin to the message. Stdin, not an argument, because `run` joins its
 * arguments and wraps any that contain a space in quotes, which would change the prompt.
 */
const opencode: HarnessDefinition = {
  id: 'opencode',
  name: 'opencode',
  builtIn: true,
  enabled: true,
  command: 'opencode',
  args: ['run', '--model', '{{model}}', '--format', 'json'],
  promptVia: 'stdin',
  versionArgs: ['--version'],
  modelsArgs: ['models'],
  models: [],
  output: 'opencode-json',
  install: 'npm install -g opencode-ai',
  sandboxPaths: ['~/.config/opencode', '~/.local/share/opencode', '~/.local/state/opencode', '~/.cache/opencode'],
};

/** Cursor CLI: the binary is `agent` (`cursor-agent` is the legacy name, see alternativeCommands). */
const cursor: HarnessDefinition = {
  id: 'cursor',
  name: 'Cursor',
  builtIn: true,
  enabled: true,
  command: 'agent',
  args: ['-p', '--output-format', 'stream-json', '--model', '{{model}}', '--force', '--', '{{prompt}}'],
  promptVia: 'arg',
  versionArgs: ['--version'],
  modelsArgs: ['--list-models'],
  models: ['auto'],
  output: 'cursor-stream-json',
  install: 'curl https://cursor.com/install -fsS | bash',
  sandboxPaths: ['~/.cursor', '~/.config/cursor'],
};

/** Amp: execute mode reads the prompt from stdin; there is no model flag. */
const amp: HarnessDefinition = {
  id: 'amp',
  name: 'Amp',
  builtIn: true,
  enabled: true,
  command: 'amp',
  args: ['-x', '--stream-json', '--dangerously-allow-all'],
  promptVia: 'stdin',
  versionArgs: ['--version'],
  models: [],
  output: 'amp-stream-json',
  install: 'npm install -g @sourcegraph/amp',
  sandboxPaths: ['~/.config/amp', '~/.local/share/amp', '~/.cache/amp'],
};

/** Every built-in harness, in the order the UI lists them. Ids match `builtInHarnessIds` in engine/config. */
export const builtInHarnesses: readonly HarnessDefinition[] = Object.freeze([claude, codex, gemini, opencode, cursor, amp]);

/**
 * Other names a built-in CLI is installed under, tried in order when its `command` is not found
 * (only while the user has not changed the command).
 */
export const alternativeCommands: Readonly<Record<string, readonly string[]>> = Object.freeze({
  cursor: ['cursor-agent'],
});

/** The built-in harness with this id, or undefined. */
export function findBuiltInHarness(id: string): HarnessDefinition | undefined {
  return builtInHarnesses.find((harness) => harness.id === id);
}

/** Why a harness cannot run on this machine, and how to install it (built-ins carry `install`). */
export function notInstalledMessage(harness: Pick<HarnessDefinition, 'name' | 'command' | 'install'>): string {
  const how = harness.install ? `; install it with \`${harness.install}\`, then choose Detect again on Harnesses` : '';
  return `${harness.name} is not installed: \`${harness.command}\` was not found on PATH or in the usual folders${how}`;
}
