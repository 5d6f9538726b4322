// Checks a harness definition as a user gave it: every field that does not fit becomes one issue
// of a ValidationError naming that field, and what fits comes back cleaned.

import type { HarnessDefinition } from '../core/api';
import { readPrices } from '../core/budget';
import { ValidationError, quote, type ValidationIssue } from '../core/errors';
import { isRecord } from '../core/validate';
import { promptElement, sessionIdElement } from './invocation';

/** The fields that take lists, as a message names them. */
const listWords: Record<string, string> = { args: 'arguments', versionArgs: 'version arguments', modelsArgs: 'models arguments', resume: 'resume arguments', models: 'models' };

const anyPlaceholderPattern = /\{\{[^{}]*\}\}/g;
const knownPlaceholders = new Set(['{{prompt}}', '{{model}}', '{{systemPrompt}}']);
const environmentNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks a whole definition (apart from id and builtIn) and returns it cleaned: name and command
 * trimmed, models without blanks or duplicates, empty `modelsArgs` / `env` left out. Every
 * problem goes into one ValidationError naming its field: an empty name or command, a NUL
 * anywhere, args that are not strings, an unknown `{{placeholder}}`, promptVia 'arg' without
 * exactly one `{{prompt}}` element (or 'stdin' with one), resume arguments without `{{sessionId}}`
 * or with another placeholder, an output format not in `formats`.
 */
export function checkDefinition(input: Record<string, unknown>, formats: readonly string[]): Omit<HarnessDefinition, 'id' | 'builtIn'> {
  const issues: ValidationIssue[] = [];
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name) issues.push({ field: 'name', message: 'The name is empty: give the harness a name' });
  if (typeof input.enabled !== 'boolean') issues.push({ field: 'enabled', message: `The switch must be true or false, not ${quote(input.enabled)}` });
  const command = checkCommand(input.command, issues);
  const args = checkStringList('args', input.args, issues);
  const promptVia = input.promptVia;
  if (promptVia !== 'stdin' && promptVia !== 'arg') issues.push({ field: 'promptVia', message: `The way the prompt goes in must be 'stdin' or 'arg', not ${quote(promptVia)}` });
  checkPlaceholders('args', args, issues);
  const promptElements = args.filter((element) => element.includes(promptElement));
  if (promptVia === 'arg' && (promptElements.length !== 1 || promptElements[0] !== promptElement)) {
    issues.push({ field: 'args', message: `The arguments need exactly one line that is \`${promptElement}\` (the whole prompt as one argument) when the prompt goes in as an argument (promptVia 'arg'), not ${quote(promptElements)}` });
  }
  if (promptVia === 'stdin' && promptElements.length > 0) {
    issues.push({ field: 'args', message: `The arguments hold \`${promptElement}\`, but the prompt goes in on stdin (promptVia 'stdin'): remove it or choose an argument` });
  }
  const versionArgs = checkStringList('versionArgs', input.versionArgs, issues);
  const modelsArgs = input.modelsArgs === undefined ? [] : checkStringList('modelsArgs', input.modelsArgs, issues);
  for (const [field, list] of [['versionArgs', versionArgs], ['modelsArgs', modelsArgs]] as const) {
    if (list.some((element) => element.match(anyPlaceholderPattern))) issues.push({ field, message: `The ${listWords[field]} cannot use placeholders: ${quote(list)}` });
  }
  const resume = input.resume === undefined ? [] : checkResume(input.resume, issues);
  const models = checkModels(input.models, issues);
  const output = input.output;
  if (typeof output !== 'string' || !formats.includes(output)) {
    issues.push({ field: 'output', message: `The output format ${quote(output)} is unknown: choose one of ${formats.join(', ')}` });
  }
  const env = checkEnvironment(input.env, issues);
  const prices = readPrices(input.prices, issues);
  if (issues.length > 0) throw new ValidationError(issues, `Harness ${quote(name || input.id)} not saved:`);

  const definition: Omit<HarnessDefinition, 'id' | 'builtIn'> = {
    name, enabled: input.enabled as boolean, command, args, promptVia: promptVia as HarnessDefinition['promptVia'],
    versionArgs, models, output: output as string,
  };
  if (modelsArgs.length > 0) definition.modelsArgs = modelsArgs;
  if (resume.length > 0) definition.resume = resume;
  if (env && Object.keys(env).length > 0) definition.env = env;
  if (Object.keys(prices).length > 0) definition.prices = prices;
  return definition;
}

export function checkCommand(value: unknown, issues: ValidationIssue[]): string {
  const command = typeof value === 'string' ? value.trim() : '';
  if (!command) issues.push({ field: 'command', message: 'The command is empty: name a program on the PATH, or an absolute path' });
  else if (command.includes('\0')) issues.push({ field: 'command', message: `The command holds a NUL character: ${quote(command)}` });
  return command;
}

export function checkStringList(field: string, value: unknown, issues: ValidationIssue[]): string[] {
  if (!Array.isArray(value) || value.some((element) => typeof element !== 'string')) {
    issues.push({ field, message: `The ${listWords[field]} must be a list of texts, not ${quote(value)}` });
    return [];
  }
  const nul = value.find((element: string) => element.includes('\0'));
  if (nul !== undefined) issues.push({ field, message: `The ${listWords[field]} hold a NUL character: ${quote(nul)}` });
  return [...value];
}

function checkPlaceholders(field: string, list: readonly string[], issues: ValidationIssue[]): void {
  for (const element of list) {
    for (const match of element.matchAll(anyPlaceholderPattern)) {
      if (!knownPlaceholders.has(match[0])) issues.push({ field, message: `The ${listWords[field]} use an unknown placeholder ${quote(match[0])}: use {{prompt}}, {{model}} or {{systemPrompt}}` });
    }
  }
}

/** Resume arguments: none (an empty list), or a list whose only placeholder is `{{sessionId}}`, used at least once. */
function checkResume(value: unknown, issues: ValidationIssue[]): string[] {
  const list = checkStringList('resume', value, issues);
  if (list.length === 0) return list;
  const others = list.flatMap((element) => [...element.matchAll(anyPlaceholderPattern)].map((match) => match[0]).filter((name) => name !== sessionIdElement));
  if (others.length > 0) issues.push({ field: 'resume', message: `The resume arguments use ${quote(others[0])}: their only placeholder is ${sessionIdElement}` });
  else if (!list.some((element) => element.includes(sessionIdElement))) {
    issues.push({ field: 'resume', message: `The resume arguments must say where the session id goes with ${sessionIdElement}, e.g. --resume and ${sessionIdElement}, not ${quote(list)}` });
  }
  return list;
}

export function checkModels(value: unknown, issues: ValidationIssue[]): string[] {
  const list = checkStringList('models', value, issues);
  return [...new Set(list.map((model) => model.trim()).filter(Boolean))];
}

export function checkEnvironment(value: unknown, issues: ValidationIssue[]): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    issues.push({ field: 'env', message: `The environment must be an object of names to texts, not ${quote(value)}` });
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const [name, text] of Object.entries(value)) {
    if (!environmentNamePattern.test(name)) issues.push({ field: `env.${name}`, message: `The environment variable ${quote(name)} is not a valid name: use letters, digits and _, not starting with a digit` });
    else if (typeof text !== 'string' || text.includes('\0')) issues.push({ field: `env.${name}`, message: `The environment variable ${quote(name)} must be a text without NUL, not ${quote(text)}` });
    else env[name] = text;
  }
  return env;
}
