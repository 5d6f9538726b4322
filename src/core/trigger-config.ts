// Checking a trigger from any door (saveTrigger, testTrigger).

import type { Connection, ConnectionKind, TriggerConfig, TriggerKind, WriteBackMarks } from './api';
import { ValidationError, quote, type ValidationIssue } from './errors';
import { isId } from './ids';
import { validateVariables } from './runs';
import { readKnownRunnerId } from './runner-choice';
import { isRecord, readBoolean, readInteger, readText } from './validate';

const triggerKinds: readonly TriggerKind[] = ['webhook', 'linear', 'jira', 'github', 'github-review'];
export const defaultPollIntervalSec = 60;
const minimumPollIntervalSec = 15;
/** Follow-up runs one pull request gets from a 'github-review' trigger unless it says otherwise. */
export const defaultMaxFollowUps = 3;
const repositoryPattern = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** The kind of account a trigger kind uses (a 'github-review' trigger uses a GitHub account); undefined for the generic webhook. */
export function connectionKindOf(kind: TriggerKind): ConnectionKind | undefined {
  if (kind === 'webhook') return undefined;
  return kind === 'github-review' ? 'github' : kind;
}

interface TriggerContext {
  pipelineIds: readonly string[];
  connectionIds: readonly string[];
  /** Kinds this build can run; others are refused with a clear message. */
  availableKinds: readonly TriggerKind[];
  /** The runners a trigger may name (`local` always); undefined skips the check. */
  runnerIds?: readonly string[];
}

function readStringList(value: unknown, field: string, words: string, issues: ValidationIssue[]): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.length <= 100 && value.every((item) => typeof item === 'string' && item.length <= 200)) {
    const items = value.map((item: string) => item.trim()).filter(Boolean);
    return items.length > 0 ? items : undefined;
  }
  issues.push({ field, message: `The ${words} must be a list of texts, not ${quote(value)}` });
  return undefined;
}

/** Names of states or labels (`what`) for started / succeeded / failed: trimmed, blanks dropped. */
function readMarks(value: unknown, field: string, what: string, issues: ValidationIssue[]): WriteBackMarks | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    issues.push({ field, message: `The write-back ${what} must be { started?, succeeded?, failed? } with names, not ${quote(value)}` });
    return undefined;
  }
  const marks: WriteBackMarks = {};
  for (const moment of ['started', 'succeeded', 'failed'] as const) {
    const name = value[moment];
    if (name === undefined || name === null || name === '') continue;
    if (typeof name === 'string' && name.trim().length <= 200) {
      if (name.trim()) marks[moment] = name.trim();
    } else issues.push({ field: `${field}.${moment}`, message: `The ${what.slice(0, -1)} for “${moment}” must be a name of up to 200 characters, not ${quote(name)}` });
  }
  return Object.keys(marks).length > 0 ? marks : undefined;
}

/**
 * Validates a trigger and returns a clean copy (unknown fields dropped). The id is kept when it
 * looks like a trigger id; the caller decides whether it exists. A webhook secret that is not
 * given stays undefined here: the caller fills a random one for a new generic webhook trigger.
 */
export function validateTrigger(input: unknown, context: TriggerContext): Omit<TriggerConfig, 'id'> & { id?: string } {
  if (!isRecord(input)) throw new ValidationError(`A trigger must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const trigger: Omit<TriggerConfig, 'id'> & { id?: string } = { name: '', kind: 'webhook', enabled: true, pipelineId: '' };
  if (input.id !== undefined && input.id !== null && input.id !== '') {
    if (isId(input.id, 'trg')) trigger.id = input.id;
    else issues.push({ field: 'id', message: `The id ${quote(input.id)} is not a trigger id` });
  }
  trigger.name = readText(input, 'name', 'name', { max: 200, trim: true, required: 'The name is empty: a trigger needs a name', subject: 'The name' }, issues) ?? '';
  if (!triggerKinds.includes(input.kind as TriggerKind)) {
    issues.push({ field: 'kind', message: `The kind must be one of ${triggerKinds.join(', ')}, not ${quote(input.kind)}` });
  } else if (!context.availableKinds.includes(input.kind as TriggerKind)) {
    issues.push({ field: 'kind', message: `The kind ${input.kind} is not available in this version of Factory yet` });
  } else {
    trigger.kind = input.kind as TriggerKind;
  }
  trigger.enabled = readBoolean(input, 'enabled', 'enabled', issues, 'The switch') ?? true;
  if (typeof input.pipelineId === 'string' && context.pipelineIds.includes(input.pipelineId)) trigger.pipelineId = input.pipelineId;
  else issues.push({ field: 'pipelineId', message: chooseMessage('pipeline', 'the trigger runs', input.pipelineId) });
  if (trigger.kind !== 'webhook') {
    if (typeof input.connectionId === 'string' && context.connectionIds.includes(input.connectionId)) trigger.connectionId = input.connectionId;
    else issues.push({ field: 'connectionId', message: chooseMessage('account', 'the trigger uses', input.connectionId) });
  }
  if (input.webhookSecret !== undefined && input.webhookSecret !== null) {
    if (typeof input.webhookSecret === 'string' && input.webhookSecret.length <= 500 && !/[\r\n\0]/.test(input.webhookSecret)) trigger.webhookSecret = input.webhookSecret.trim();
    else issues.push({ field: 'webhookSecret', message: 'The webhook secret must be text of up to 500 characters on one line' });
  }
  if (trigger.kind !== 'webhook') {
    const interval = readInteger(input, 'pollIntervalSec', 'pollIntervalSec', { min: minimumPollIntervalSec, max: 86_400, unit: 'seconds', subject: 'The poll interval' }, issues);
    if (interval !== undefined) trigger.pollIntervalSec = interval;
  }
  if (input.filter !== undefined && input.filter !== null && trigger.kind !== 'webhook') {
    if (!isRecord(input.filter)) issues.push({ field: 'filter', message: `The filter must be an object, not ${quote(input.filter)}` });
    else {
      const filter: NonNullable<TriggerConfig['filter']> = {};
      for (const name of ['team', 'repo', 'query', 'assignee'] as const) {
        const value = input.filter[name];
        if (value === undefined || value === null || value === '') continue;
        if (typeof value === 'string' && value.length <= 2000) filter[name] = value.trim();
        else issues.push({ field: `filter.${name}`, message: `The ${name === 'repo' ? 'repository' : name} filter must be text, not ${quote(value)}` });
      }
      for (const name of ['labels', 'states'] as const) {
        const list = readStringList(input.filter[name], `filter.${name}`, `${name} filter`, issues);
        if (list) filter[name] = list;
      }
      if (Object.keys(filter).length > 0) trigger.filter = filter;
    }
  }
  if (trigger.kind === 'github-review') {
    // A follow-up answers on its pull request (its pullRequest step updates it): no tracker write-back.
    if (!trigger.filter?.repo || !repositoryPattern.test(trigger.filter.repo)) issues.push({ field: 'filter.repo', message: `The repository must be the one whose pull requests are watched, as owner/name, not ${quote(trigger.filter?.repo ?? '')}` });
    trigger.maxFollowUps = readInteger(input, 'maxFollowUps', 'maxFollowUps', { min: 0, max: 1000, subject: 'The follow-up limit', note: 'per pull request' }, issues) ?? defaultMaxFollowUps;
  } else if (input.writeBack !== undefined && input.writeBack !== null && trigger.kind !== 'webhook') {
    const writeBack = input.writeBack;
    if (!isRecord(writeBack) || (writeBack.comment !== undefined && typeof writeBack.comment !== 'boolean')) {
      issues.push({ field: 'writeBack', message: `The write-back must be { comment: true or false, states?, labels? }, not ${quote(writeBack)}` });
    } else {
      trigger.writeBack = { comment: writeBack.comment === true };
      for (const name of ['states', 'labels'] as const) {
        const marks = readMarks(writeBack[name], `writeBack.${name}`, name, issues);
        if (marks) trigger.writeBack[name] = marks;
      }
    }
  }
  if (trigger.kind === 'github' || trigger.kind === 'linear' || trigger.kind === 'jira') readApprovalCommands(input, trigger, issues);
  const agent = readBoolean(input, 'agent', 'agent', issues, 'The agent switch');
  if (agent && trigger.kind !== 'linear') issues.push({ field: 'agent', message: `Only a Linear trigger can start runs from agent sessions, not a ${trigger.kind} trigger` });
  else if (agent) {
    trigger.agent = true;
    // Agent sessions start runs from the body alone (no issue to read back), so only signed ones count.
    if (!trigger.webhookSecret) issues.push({ field: 'webhookSecret', message: "An agent trigger needs the webhook signing secret: copy it from your Linear application's webhook settings (Settings → API → your application) into Webhook secret" });
  }
  const variables = validateVariables(input.variables, 'variables', issues);
  if (Object.keys(variables).length > 0) trigger.variables = variables;
  const runnerId = readKnownRunnerId(input, context.runnerIds, issues);
  if (runnerId !== undefined) trigger.runnerId = runnerId;
  if (issues.length > 0) throw new ValidationError(issues, 'Trigger not saved:');
  return trigger;
}

/**
 * Who may decide an approval from the issue's comments (`approvers`: logins, emails or ids, as the
 * tracker names people) and what starts a command (`commandPrefix`: 1 to 3 characters, none of them
 * white space; default "/"). See src/triggers/approval-commands.ts.
 */
function readApprovalCommands(input: Record<string, unknown>, trigger: Omit<TriggerConfig, 'id'>, issues: ValidationIssue[]): void {
  const approvers = readStringList(input.approvers, 'approvers', 'approvers', issues);
  if (approvers) trigger.approvers = approvers;
  const prefix = input.commandPrefix;
  if (prefix === undefined || prefix === null || prefix === '') return;
  if (typeof prefix === 'string' && /^\S{1,3}$/u.test(prefix)) trigger.commandPrefix = prefix;
  else issues.push({ field: 'commandPrefix', message: `The command prefix must be 1 to 3 characters without spaces, such as /, not ${quote(prefix)}` });
}

const connectionKinds: readonly ConnectionKind[] = ['linear', 'jira', 'github'];

/**
 * Validates an account to save or test and returns a clean copy. `token` stays undefined when none
 * was given (saving keeps the stored one); the caller verifies the credentials with the service.
 */
export function validateConnection(input: unknown, availableKinds: readonly ConnectionKind[]): Omit<Connection, 'id' | 'token'> & { id?: string; token?: string } {
  if (!isRecord(input)) throw new ValidationError(`An account must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const kind = input.kind as ConnectionKind;
  if (!connectionKinds.includes(kind)) issues.push({ field: 'kind', message: `The service must be one of ${connectionKinds.join(', ')}, not ${quote(input.kind)}` });
  else if (!availableKinds.includes(kind)) issues.push({ field: 'kind', message: `${kind} accounts are not available in this version of Factory yet` });
  const connection: Omit<Connection, 'id' | 'token'> & { id?: string; token?: string } = { kind, name: '' };
  if (input.id !== undefined && input.id !== null && input.id !== '') {
    if (isId(input.id, 'con')) connection.id = input.id;
    else issues.push({ field: 'id', message: `The id ${quote(input.id)} is not an account id` });
  }
  if (input.name !== undefined && input.name !== null) {
    if (typeof input.name === 'string' && input.name.trim().length <= 100) connection.name = input.name.trim();
    else issues.push({ field: 'name', message: 'The name must be text of up to 100 characters' });
  }
  if (input.baseUrl !== undefined && input.baseUrl !== null && input.baseUrl !== '') {
    const url = typeof input.baseUrl === 'string' ? parseUrl(input.baseUrl.trim()) : undefined;
    if (url && (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash) connection.baseUrl = url.href.replace(/\/+$/, '');
    else issues.push({ field: 'baseUrl', message: `The API address must be an http(s) address without credentials, such as https://api.linear.app, not ${quote(input.baseUrl)}` });
  }
  if (input.email !== undefined && input.email !== null && input.email !== '') {
    if (typeof input.email === 'string' && /^[^\s@]+@[^\s@]+$/.test(input.email.trim()) && input.email.length <= 320) connection.email = input.email.trim();
    else issues.push({ field: 'email', message: `The email must be an email address, not ${quote(input.email)}` });
  }
  if (input.token !== undefined && input.token !== null && input.token !== '') {
    // Printable ASCII on one line: a token goes into an HTTP header as it is.
    if (typeof input.token === 'string' && /^[\x21-\x7e]{1,10000}$/.test(input.token.trim())) connection.token = input.token.trim();
    else issues.push({ field: 'token', message: 'The token must be the key or token as the service shows it: one line of printable characters, no spaces' });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'Account not saved:');
  return connection;
}

/** "choose the pipeline the trigger runs", and why the one chosen cannot be used. */
function chooseMessage(what: string, role: string, value: unknown): string {
  const chosen = typeof value === 'string' && value !== '' ? ` (the ${what} ${quote(value)} no longer exists)` : '';
  return `Choose the ${what} ${role}${chosen}`;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
