// Templates: `{{ path }}` placeholders (DESIGN §4 "Templates"): where they are, what they name,
// and their values filled in as text (`renderTemplate`: agent prompts, approval messages) or as
// environment variables for a step's process (`stepEnvironment`). Shell commands are filled in
// without putting a value into shell source: shell-quoting.ts.

import type { Issue } from './api';

/** One `{{ path }}` in a template: the trimmed path and where the placeholder stands. */
interface Placeholder {
  path: string;
  start: number;
  end: number;
}

/** Everything a template can refer to. */
export interface TemplateContext {
  /** `issue.<field>`; `issue.raw.<a.b.c>` walks into `raw`. */
  issue?: Issue;
  vars: Record<string, string>;
  /** Results of earlier steps; `selected` holds the LABELS of the chosen options; `url` and `number` are a pullRequest step's pull request. */
  steps: Record<string, { output?: string; selected?: string[]; comment?: string; url?: string; number?: number }>;
  run: { id: string; url?: string };
  project: { name: string; path: string };
  workspace: string;
}

const placeholderPattern = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Every placeholder of `template`, in order. */
export function listPlaceholders(template: string): Placeholder[] {
  const found: Placeholder[] = [];
  for (const match of template.matchAll(placeholderPattern)) {
    found.push({ path: match[1]!, start: match.index!, end: match.index! + match[0].length });
  }
  return found;
}

// ───────────────────────────── Paths and values ─────────────────────────────

const issueFields = ['title', 'key', 'description', 'url', 'labels', 'priority', 'source'] as const;
const stepFields = ['output', 'selected', 'comment', 'url', 'number'] as const;
const arraySeparator = ', ';

/**
 * Whether `path` names something a template may refer to: `issue.<field>`, `issue.raw`,
 * `issue.raw.<a.b.c>`, `vars.<name>`, `steps.<id>.output|selected|comment|url|number`, `run.id`, `run.url`,
 * `project.name`, `project.path`, `workspace`. Only the shape is checked, not whether the issue,
 * variable or step exists (a pipeline validator checks step order itself).
 */
export function isKnownPlaceholderRoot(path: string): boolean {
  const parts = path.split('.');
  if (parts.some((part) => part === '')) return false;
  const [root, second] = parts;
  switch (root) {
    case 'issue':
      if (second === 'raw') return true;
      return parts.length === 2 && (issueFields as readonly string[]).includes(second!);
    case 'vars':
      return parts.length === 2;
    case 'steps':
      return parts.length === 3 && (stepFields as readonly string[]).includes(parts[2]!);
    case 'run':
      return parts.length === 2 && (second === 'id' || second === 'url');
    case 'project':
      return parts.length === 2 && (second === 'name' || second === 'path');
    case 'workspace':
      return parts.length === 1;
    default:
      return false;
  }
}

/**
 * The text `path` stands for in `context`. Never throws: an unknown path, a missing issue, variable
 * or step, `undefined` and `null` all give `''`. Only own properties are read, so
 * `issue.raw.__proto__` or `vars.constructor` cannot reach an object's prototype. Values become
 * text as follows: strings as they are; numbers and booleans as `String(value)`; arrays as their
 * items joined by `", "` (an item that is an object or array as JSON); other objects as JSON.
 * The result is the value itself, never rendered again.
 */
export function resolvePlaceholder(path: string, context: TemplateContext): string {
  if (!isKnownPlaceholderRoot(path)) return '';
  const [root, second, ...rest] = path.split('.');
  switch (root) {
    case 'issue': {
      const issue = context.issue;
      if (!issue) return '';
      if (second === 'raw') return formatValue(walkOwnPath(issue.raw, rest));
      return formatValue(ownValue(issue, second!));
    }
    case 'vars':
      return formatValue(ownValue(context.vars, second!));
    case 'steps': {
      const step = ownValue(context.steps, second!);
      return formatValue(ownValue(step, rest[0]!));
    }
    case 'run':
      return formatValue(ownValue(context.run, second!));
    case 'project':
      return formatValue(ownValue(context.project, second!));
    default:
      return formatValue(context.workspace);
  }
}

/** `container[key]` when it is an own property of an object, else undefined. */
function ownValue(container: unknown, key: string): unknown {
  if (typeof container !== 'object' || container === null) return undefined;
  if (!Object.hasOwn(container, key)) return undefined;
  return (container as Record<string, unknown>)[key];
}

/** Follows `keys` into nested objects and arrays (arrays by index only), own properties only. */
function walkOwnPath(start: unknown, keys: string[]): unknown {
  let value = start;
  for (const key of keys) {
    if (Array.isArray(value) && !/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
    value = ownValue(value, key);
    if (value === undefined) return undefined;
  }
  return value;
}

function formatValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(formatItem).join(arraySeparator);
  return formatItem(value);
}

function formatItem(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      if (value === null) return '';
      try {
        return JSON.stringify(value) ?? '';
      } catch {
        return ''; // a cycle: cannot come from JSON, so not worth more than empty
      }
    default:
      return '';
  }
}

/**
 * `template` with each placeholder replaced by `resolvePlaceholder(path, context)`. Replacement is
 * one pass over the original text: a value that contains `{{x}}` is inserted as it is.
 * Not for shell commands: use `renderShellCommand`.
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  let output = '';
  let cursor = 0;
  for (const placeholder of listPlaceholders(template)) {
    output += template.slice(cursor, placeholder.start) + resolvePlaceholder(placeholder.path, context);
    cursor = placeholder.end;
  }
  return output + template.slice(cursor);
}

// ───────────────────────────── Environment ─────────────────────────────

/** Environment values cannot hold NUL (the C strings of `execve` end there): it is removed. */
export function environmentValue(text: string): string {
  return text.replace(/\0/g, '');
}

/** `name` upper-cased with every character outside `[A-Z0-9_]` replaced by `_`. */
export function environmentName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

/**
 * The context under readable names, for every step's process:
 * - with an issue: `FACTORY_ISSUE_TITLE`, `_KEY`, `_DESCRIPTION`, `_URL`, `_LABELS` (joined by
 *   `", "`), `_PRIORITY`, `_SOURCE` (empty when the field is missing);
 * - `FACTORY_RUN_ID`, `FACTORY_RUN_URL` (only when the run has a URL), `FACTORY_PROJECT_NAME`,
 *   `FACTORY_PROJECT_PATH`, `FACTORY_WORKSPACE`;
 * - `FACTORY_VAR_<NAME>` per variable (name upper-cased, characters outside `[A-Z0-9_]` as `_`;
 *   two names that map to one variable: the later one wins);
 * - `FACTORY_STEP_<ID>_OUTPUT`, `_SELECTED` (labels joined by `", "`), `_COMMENT`, `_URL`, `_NUMBER`
 *   (a pull request's), for each field a step has (id upper-cased, `-` as `_`).
 * NUL characters are removed from every value, since an environment cannot carry them.
 */
export function stepEnvironment(context: TemplateContext): Record<string, string> {
  const environment: Record<string, string> = {};
  const set = (name: string, value: unknown) => {
    environment[name] = environmentValue(formatValue(value));
  };
  if (context.issue) {
    for (const field of issueFields) set(`FACTORY_ISSUE_${field.toUpperCase()}`, ownValue(context.issue, field));
  }
  set('FACTORY_RUN_ID', context.run.id);
  if (context.run.url !== undefined) set('FACTORY_RUN_URL', context.run.url);
  set('FACTORY_PROJECT_NAME', context.project.name);
  set('FACTORY_PROJECT_PATH', context.project.path);
  set('FACTORY_WORKSPACE', context.workspace);
  for (const [name, value] of Object.entries(context.vars)) set(`FACTORY_VAR_${environmentName(name)}`, value);
  for (const [id, step] of Object.entries(context.steps)) {
    for (const field of stepFields) {
      if (step[field] !== undefined) set(`FACTORY_STEP_${environmentName(id)}_${field.toUpperCase()}`, step[field]);
    }
  }
  return environment;
}
