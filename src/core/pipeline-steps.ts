// Pipelines' steps, kind by kind (DESIGN §3 shapes, §4 "Templates"): each step of untrusted input
// read and cleaned (shell, agent, approval, pullRequest, and the fields every kind but approval
// shares), its placeholders checked against the steps before it, and the maps of names to text
// that pipelines and steps both have (`variables`, a step's `env`). The pipeline around the steps
// is pipeline.ts; the messages get their fields in words in pipeline-words.ts.

import type { PullRequestStep, Step, StepKind } from './api';
import { quote } from './errors';
import { readBudget } from './budget';
import { repositoryPattern } from './github-repository';
import { commandProblem } from './pipeline-words';
import { shellCommandProblems } from './shell-quoting';
import { isKnownPlaceholderRoot, listPlaceholders } from './template';
import { isAbsent, isRecord, nulCharacterMessage, own, readBoolean, readInteger, readText, shown, type Issues } from './validate';

/** An account a pullRequest step may name (only GitHub ones will do). */
export interface KnownAccount {
  id: string;
  kind: string;
  name: string;
}

/** A step id: a lowercase letter, then up to 39 lowercase letters, digits, `-` or `_`. */
export const stepIdPattern = /^[a-z][a-z0-9_-]{0,39}$/;

const stepKinds: readonly StepKind[] = ['shell', 'agent', 'approval', 'pullRequest'];
/** What `{{steps.<id>.<field>}}` may ask for; selected and comment exist only on approval steps, url and number only on pullRequest steps. */
const stepOutputFields = ['output', 'selected', 'comment', 'url', 'number'] as const;
const fieldsOfKind: Partial<Record<string, StepKind>> = { selected: 'approval', comment: 'approval', url: 'pullRequest', number: 'pullRequest' };
/** The placeholder shapes Factory fills in (DESIGN §4 "Templates"), for messages. */
const placeholderShapes = 'issue.<field>, issue.raw.<path>, vars.<name>, steps.<id>.output|selected|comment|url|number, run.id, run.url, project.name, project.path, workspace';
/** A git remote's name. */
const remotePattern = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
/** A branch name git accepts (the common rules of git check-ref-format, no leading dash). */
const branchPattern = /^(?![-/.])(?!.*(?:\.\.|\/\/|@\{|\.lock$|\/\.|[/.]$))[A-Za-z0-9._\/+-]{1,250}$/;
/** Names of variables and environment variables. */
const variableNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The engine passes template values to shell steps under these names; a step may not set them. */
const reservedEnvPrefix = 'FACTORY_';

export const maxNameLength = 200;
/** Commands, prompts, messages, and the values of variables and environment variables. */
const maxTextLength = 100_000;
const maxSteps = 100;
const maxEntries = 100;
const maxOptions = 20;
const retriesRange = { min: 0, max: 10 };
const timeoutRange = { min: 1, max: 86_400 };
const stallRange = { min: 10, max: 86_400 };

// ───────────────────────────── Reading untrusted values ─────────────────────────────

/** A name of a variable or environment variable; `__proto__` is refused so maps stay plain data. */
function nameProblem(name: string): string | undefined {
  if (name === '__proto__') return 'cannot be a name';
  if (!variableNamePattern.test(name)) return 'is not a valid name: use letters, digits and _, not starting with a digit';
  return undefined;
}

/** A map of names to text, such as `variables` or a step's `env`; missing means empty. */
export function readTextMap(record: Record<string, unknown>, key: string, field: string, issues: Issues): Record<string, string> {
  const value = own(record, key);
  const result: Record<string, string> = {};
  if (isAbsent(value)) return result;
  if (!isRecord(value)) {
    issues.push({ field, message: `must be an object of names and texts, not ${shown(value)}` });
    return result;
  }
  const names = Object.keys(value);
  if (names.length > maxEntries) {
    issues.push({ field, message: `are ${names.length}; the most is ${maxEntries}` });
    return result;
  }
  for (const name of names) {
    // At the map's own field: a name may be long, and a message quotes it cut to a readable length.
    const problem = nameProblem(name) ?? (key === 'env' && name.startsWith(reservedEnvPrefix) ? `starts with ${reservedEnvPrefix}, kept for the values Factory passes to the step` : undefined);
    if (problem) {
      issues.push({ field, message: `include ${quote(name)}, which ${problem}` });
      continue;
    }
    const text = value[name];
    if (typeof text !== 'string') {
      issues.push({ field: `${field}.${name}`, message: `must be text, not ${shown(text)}` });
    } else if (text.length > maxTextLength) {
      issues.push({ field: `${field}.${name}`, message: `is ${text.length} characters long; the most is ${maxTextLength}` });
    } else if (text.includes('\0')) {
      issues.push({ field: `${field}.${name}`, message: nulCharacterMessage });
    } else {
      result[name] = text;
    }
  }
  return result;
}

/** A harness id that must name a harness of `harnessIds`; without a list (import), any id passes. */
export function readHarnessId(record: Record<string, unknown>, field: string, harnessIds: readonly string[] | undefined, issues: Issues): string | undefined {
  const id = readText(record, 'harnessId', field, { max: maxNameLength, trim: true }, issues);
  if (id === undefined || harnessIds === undefined || harnessIds.includes(id)) return id;
  const known = harnessIds.length > 0 ? `choose one of ${harnessIds.join(', ')}` : 'no harness is set up yet';
  issues.push({ field, message: `${quote(id)} is not a known harness: ${known}` });
  return undefined;
}

// ───────────────────────────── Template references ─────────────────────────────

/** What the steps before the one being read offer to placeholders: id → kind (undefined: unreadable). */
type EarlierSteps = Map<string, StepKind | undefined>;

/**
 * DESIGN §4 "Templates": every placeholder has a shape Factory fills in (`isKnownPlaceholderRoot`;
 * anything else would always be empty), and `steps.<id>.<field>` names a step that comes earlier
 * and a field that kind of step has. `vars.<name>` may name any variable: a run can bring variables
 * of its own (`startRun`).
 */
function checkReferences(text: string, field: string, earlier: EarlierSteps, allStepIds: ReadonlySet<string>, issues: Issues): void {
  for (const placeholder of listPlaceholders(text)) {
    const written = `uses ${quote(text.slice(placeholder.start, placeholder.end))}`;
    const parts = placeholder.path.split('.');
    if (parts[0] !== 'steps') {
      if (!isKnownPlaceholderRoot(placeholder.path)) {
        issues.push({ field, message: `${written}, which names nothing Factory fills in; use one of ${placeholderShapes}` });
      }
      continue;
    }
    const [, stepId, wanted] = parts;
    if (parts.length !== 3 || !stepId || !wanted) {
      issues.push({ field, message: `${written}, which should name a step and what it gave: {{steps.<step id>.output}}, .selected or .comment` });
    } else if (!earlier.has(stepId)) {
      const where = allStepIds.has(stepId) ? 'does not come before this step' : 'is not in this pipeline';
      issues.push({ field, message: `${written}, but step ${quote(stepId)} ${where}` });
    } else if (!(stepOutputFields as readonly string[]).includes(wanted)) {
      issues.push({ field, message: `${written}, which asks step ${quote(stepId)} for ${quote(wanted)}; a step offers ${stepOutputFields.join(', ')}` });
    } else {
      const kind = earlier.get(stepId);
      const owner = fieldsOfKind[wanted];
      if (owner !== undefined && kind !== undefined && kind !== owner) {
        issues.push({ field, message: `${written}, which asks for ${wanted} of step ${quote(stepId)}, a ${kind} step; only ${owner === 'approval' ? 'approval' : 'pull request'} steps have ${wanted}` });
      }
    }
  }
}

// ───────────────────────────── Steps ─────────────────────────────

interface StepReading {
  earlier: EarlierSteps;
  allStepIds: ReadonlySet<string>;
  /** Where each valid id was first used, 1-based, to report duplicates. */
  firstUse: Map<string, number>;
  harnessIds: readonly string[] | undefined;
  connections: readonly KnownAccount[] | undefined;
}

function readStepId(raw: Record<string, unknown>, index: number, reading: StepReading, issues: Issues): { id: string | undefined; path: string } {
  const numbered = `steps.#${index + 1}`;
  const value = own(raw, 'id');
  if (isAbsent(value) || value === '') {
    issues.push({ field: `${numbered}.id`, message: 'is empty: use a–z, 0–9, - and _, starting with a letter' });
    return { id: undefined, path: numbered };
  }
  const id = typeof value === 'string' ? value.trim() : undefined;
  if (id === undefined || !stepIdPattern.test(id)) {
    issues.push({ field: `${numbered}.id`, message: `${shown(value)} may use only a–z, 0–9, - and _, starting with a letter (at most 40)` });
    return { id: undefined, path: numbered };
  }
  const first = reading.firstUse.get(id);
  if (first !== undefined) {
    issues.push({ field: `${numbered}.id`, message: `${quote(id)} is already the id of step ${first}; each step needs its own` });
    return { id: undefined, path: numbered };
  }
  reading.firstUse.set(id, index + 1);
  return { id, path: `steps.${id}` };
}

/** Reads one step; returns it cleaned, or undefined when it added issues. */
function readStep(raw: unknown, index: number, reading: StepReading, issues: Issues): Step | undefined {
  const before = issues.length;
  if (!isRecord(raw)) {
    issues.push({ field: `steps.#${index + 1}`, message: `must be an object, not ${shown(raw)}` });
    return undefined;
  }
  const { id, path } = readStepId(raw, index, reading, issues);
  const name = readText(raw, 'name', `${path}.name`, { max: maxNameLength, trim: true, required: 'is empty: give the step a name' }, issues);
  const kindValue = own(raw, 'kind');
  const kind = stepKinds.find((known) => known === kindValue);
  if (kind === undefined) {
    const problem = isAbsent(kindValue) ? 'is missing' : `${shown(kindValue)} is not a step kind`;
    issues.push({ field: `${path}.kind`, message: `${problem}; use one of ${stepKinds.join(', ')}` });
  }
  const templated = (text: string | undefined, field: string) => {
    if (text !== undefined) checkReferences(text, field, reading.earlier, reading.allStepIds, issues);
  };

  let step: Step | undefined;
  const base = { id: id ?? '', name: name ?? '' };
  if (kind === 'shell') {
    const command = readText(raw, 'command', `${path}.command`, { max: maxTextLength, trim: false, required: 'is empty: a shell step runs a command' }, issues);
    templated(command, `${path}.command`);
    const env = readTextMap(raw, 'env', `${path}.env`, issues);
    if (command !== undefined) {
      for (const problem of shellCommandProblems(command, env)) {
        if (problem.severity === 'error') issues.push({ field: `${path}.command`, message: commandProblem(problem.message) });
      }
    }
    for (const [envName, value] of Object.entries(env)) templated(value, `${path}.env.${envName}`);
    step = { ...base, kind, command: command ?? '' };
    if (Object.keys(env).length > 0) step.env = env;
  } else if (kind === 'agent') {
    const prompt = readText(raw, 'prompt', `${path}.prompt`, { max: maxTextLength, trim: false, required: 'is empty: say what the agent should do' }, issues);
    templated(prompt, `${path}.prompt`);
    const systemPrompt = readText(raw, 'systemPrompt', `${path}.systemPrompt`, { max: maxTextLength, trim: false }, issues);
    templated(systemPrompt, `${path}.systemPrompt`);
    const harnessId = readHarnessId(raw, `${path}.harnessId`, reading.harnessIds, issues);
    const model = readText(raw, 'model', `${path}.model`, { max: maxNameLength, trim: true }, issues);
    const stallSec = readInteger(raw, 'stallSec', `${path}.stallSec`, stallRange, issues);
    const budget = readBudget(raw, 'budget', `${path}.budget`, issues);
    step = { ...base, kind, prompt: prompt ?? '' };
    if (systemPrompt !== undefined) step.systemPrompt = systemPrompt;
    if (harnessId !== undefined) step.harnessId = harnessId;
    if (model !== undefined) step.model = model;
    if (stallSec !== undefined) step.stallSec = stallSec;
    if (budget !== undefined) step.budget = budget;
    const onStall = own(raw, 'onStall');
    if (onStall === 'notify' || onStall === 'cancel' || onStall === 'retry') step.onStall = onStall;
    else if (onStall !== undefined && onStall !== null) issues.push({ field: `${path}.onStall`, message: `must be notify, cancel or retry, not ${shown(onStall)}` });
  } else if (kind === 'approval') {
    const message = readText(raw, 'message', `${path}.message`, { max: maxTextLength, trim: false, required: 'is empty: tell the person what to decide' }, issues);
    templated(message, `${path}.message`);
    const choices = readChoices(raw, `${path}.choices`, issues);
    step = { ...base, kind, message: message ?? '' };
    if (choices !== undefined) step.choices = choices;
  } else if (kind === 'pullRequest') {
    step = readPullRequestStep(raw, path, base, reading.connections, issues);
    templated(step.title, `${path}.title`);
    templated(step.body, `${path}.body`);
  }

  // An approval waits for a person as long as it takes and is never attempted again, so its
  // retries, timeoutSec and continueOnError are dropped unread.
  if (step !== undefined && step.kind !== 'approval') {
    const retries = readInteger(raw, 'retries', `${path}.retries`, retriesRange, issues);
    const timeoutSec = readInteger(raw, 'timeoutSec', `${path}.timeoutSec`, timeoutRange, issues);
    const continueOnError = readBoolean(raw, 'continueOnError', `${path}.continueOnError`, issues);
    if (retries !== undefined) step.retries = retries;
    if (timeoutSec !== undefined) step.timeoutSec = timeoutSec;
    if (continueOnError !== undefined) step.continueOnError = continueOnError;
  }

  if (id !== undefined) reading.earlier.set(id, kind);
  return issues.length === before ? step : undefined;
}

/** The fields of a pullRequest step: a GitHub account (checked against `connections` when known), where to push and propose, the templates. */
function readPullRequestStep(raw: Record<string, unknown>, path: string, base: { id: string; name: string }, connections: readonly KnownAccount[] | undefined, issues: Issues): PullRequestStep {
  const connectionId = readText(raw, 'connectionId', `${path}.connectionId`, { max: maxNameLength, trim: true, required: 'is not chosen: a pull request step needs a GitHub account' }, issues);
  if (connectionId !== undefined && connections !== undefined) {
    const connection = connections.find((candidate) => candidate.id === connectionId);
    const github = connections.filter((candidate) => candidate.kind === 'github').map((candidate) => quote(candidate.name));
    const choose = github.length > 0 ? `choose one of ${github.join(', ')}` : 'add a GitHub account first (Settings → Accounts)';
    if (!connection) issues.push({ field: `${path}.connectionId`, message: `${quote(connectionId)} is not a known account: ${choose}` });
    else if (connection.kind !== 'github') issues.push({ field: `${path}.connectionId`, message: `${quote(connection.name)} is a ${connection.kind} account, and pull requests need a GitHub one: ${choose}` });
  }
  const repository = readText(raw, 'repository', `${path}.repository`, { max: maxNameLength, trim: true }, issues);
  if (repository !== undefined && !repositoryPattern.test(repository)) issues.push({ field: `${path}.repository`, message: `${quote(repository)} is not a GitHub repository as owner/name (leave it empty to read it from the remote's URL)` });
  const remote = readText(raw, 'remote', `${path}.remote`, { max: maxNameLength, trim: true }, issues);
  if (remote !== undefined && !remotePattern.test(remote)) issues.push({ field: `${path}.remote`, message: `${quote(remote)} is not the name of a git remote (such as origin)` });
  const baseBranch = readText(raw, 'base', `${path}.base`, { max: maxNameLength, trim: true }, issues);
  if (baseBranch !== undefined && !branchPattern.test(baseBranch)) issues.push({ field: `${path}.base`, message: `${quote(baseBranch)} is not a branch name git accepts (leave it empty for the repository's default branch)` });
  const title = readText(raw, 'title', `${path}.title`, { max: maxNameLength * 5, trim: false }, issues);
  const body = readText(raw, 'body', `${path}.body`, { max: maxTextLength, trim: false }, issues);
  const draft = readBoolean(raw, 'draft', `${path}.draft`, issues);
  const step: PullRequestStep = { ...base, kind: 'pullRequest', connectionId: connectionId ?? '' };
  if (repository !== undefined) step.repository = repository;
  if (remote !== undefined) step.remote = remote;
  if (baseBranch !== undefined) step.base = baseBranch;
  if (title !== undefined) step.title = title;
  if (body !== undefined) step.body = body;
  if (draft !== undefined) step.draft = draft;
  return step;
}

function readChoices(raw: Record<string, unknown>, field: string, issues: Issues): { mode: 'single' | 'multiple'; options: string[] } | undefined {
  const value = own(raw, 'choices');
  if (isAbsent(value)) return undefined;
  if (!isRecord(value)) {
    issues.push({ field, message: `must be an object such as { "mode": "single", "options": ["Yes", "No"] }, not ${shown(value)}` });
    return undefined;
  }
  const mode = own(value, 'mode');
  if (mode !== 'single' && mode !== 'multiple') {
    issues.push({ field: `${field}.mode`, message: `${shown(mode)} is not a choice mode: use single or multiple` });
  }
  const list = own(value, 'options');
  const options: string[] = [];
  if (!Array.isArray(list) || list.length === 0) {
    issues.push({ field: `${field}.options`, message: `must be a list of 1 to ${maxOptions} labels, not ${Array.isArray(list) ? 'an empty list' : shown(list)}` });
  } else if (list.length > maxOptions) {
    issues.push({ field: `${field}.options`, message: `has ${list.length} options; the most is ${maxOptions}` });
  } else {
    list.forEach((option: unknown, index) => {
      const label = typeof option === 'string' ? option.trim() : undefined;
      const position = `: option ${index + 1}`;
      const problem = label === undefined ? `must be text, not ${shown(option)}` : label === '' ? 'have an empty label'
        : label.length > maxNameLength ? `are at most ${maxNameLength} characters long, not ${label.length}` : label.includes('\0') ? nulCharacterMessage
        : options.includes(label) ? `repeat ${quote(label)}, the label of option ${options.indexOf(label) + 1}` : undefined;
      if (problem) issues.push({ field: `${field}.options`, message: problem + position });
      else options.push(label!);
    });
  }
  return mode === 'single' || mode === 'multiple' ? { mode, options } : undefined;
}

export function readSteps(record: Record<string, unknown>, harnessIds: readonly string[] | undefined, issues: Issues, connections?: readonly KnownAccount[]): Step[] {
  const value = own(record, 'steps');
  if (isAbsent(value) || (Array.isArray(value) && value.length === 0)) {
    issues.push({ field: 'steps', message: 'is empty: a pipeline needs at least one step' });
    return [];
  }
  if (!Array.isArray(value)) {
    issues.push({ field: 'steps', message: `must be a list, not ${shown(value)}` });
    return [];
  }
  if (value.length > maxSteps) {
    // Only the first steps are read, so a hostile list cannot make the error message huge.
    issues.push({ field: 'steps', message: `has ${value.length} steps; the most is ${maxSteps}` });
  }
  const considered = value.slice(0, maxSteps);
  const allStepIds = new Set<string>();
  for (const raw of considered) {
    const id = isRecord(raw) ? own(raw, 'id') : undefined;
    if (typeof id === 'string') allStepIds.add(id.trim());
  }
  const reading: StepReading = { earlier: new Map(), allStepIds, firstUse: new Map(), harnessIds, connections };
  const steps: Step[] = [];
  considered.forEach((raw, index) => {
    const step = readStep(raw, index, reading, issues);
    if (step) steps.push(step);
  });
  return steps;
}
