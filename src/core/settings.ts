// Settings and projects: defaults and validation of untrusted input (from any door).

import type { ProjectInput, Settings, SettingsInput } from './api';
import { ValidationError, quote, type ValidationIssue } from './errors';
import { readSpendLimit } from './budget';
import { isId } from './ids';
import { readRunnerId } from './runners';
import { isRecord, nulCharacterMessage, readBoolean, readInteger, readText } from './validate';

export const defaultSettings: Settings = {
  webhookServer: { enabled: false, host: '127.0.0.1', port: 7717 },
  remoteAccess: { enabled: false, host: '127.0.0.1', port: 7718, allowedHosts: [] },
  maxParallelRuns: 2,
  worktreeRetentionDays: 7,
  theme: 'system',
};

// A host name or an IP literal: what a server may listen on, or a Host header may name.
const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** `words`: the server as a message names it ("The webhook server"). */
function readServer(
  input: unknown, current: Settings['webhookServer'], field: string, words: string, issues: ValidationIssue[],
): Settings['webhookServer'] {
  if (input === undefined || input === null) return current;
  if (!isRecord(input)) {
    issues.push({ field, message: `${words} settings must be an object with enabled, host and port, not ${quote(input)}` });
    return current;
  }
  const next = { ...current };
  next.enabled = readBoolean(input, 'enabled', `${field}.enabled`, issues, `${words} switch`) ?? next.enabled;
  if (input.host !== undefined) {
    if (typeof input.host === 'string' && input.host.trim().length <= 253 && hostPattern.test(input.host.trim())) next.host = input.host.trim();
    else issues.push({ field: `${field}.host`, message: `${words} address must be an address such as 127.0.0.1 or 0.0.0.0, not ${quote(input.host)}` });
  }
  next.port = readInteger(input, 'port', `${field}.port`, { min: 1, max: 65535, subject: `${words} port` }, issues) ?? next.port;
  return next;
}

/**
 * Applies a partial settings object to `current` and returns the result. Every field is checked;
 * all problems are reported together as one ValidationError. Unknown fields are ignored.
 */
export function mergeSettings(current: Settings, input: unknown): Settings {
  if (!isRecord(input)) throw new ValidationError(`Settings must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const patch = input as SettingsInput & Record<string, unknown>;
  const next: Settings = {
    ...current,
    webhookServer: readServer(patch.webhookServer, current.webhookServer, 'webhookServer', 'The webhook server', issues),
    remoteAccess: { ...current.remoteAccess, ...readServer(patch.remoteAccess, current.remoteAccess, 'remoteAccess', 'The remote access', issues) },
  };
  const remote = patch.remoteAccess as Record<string, unknown> | undefined;
  if (isRecord(remote) && remote.allowedHosts !== undefined) {
    const hosts = remote.allowedHosts;
    if (Array.isArray(hosts) && hosts.length <= 50 && hosts.every((host) => typeof host === 'string' && hostPattern.test(host.trim()))) {
      next.remoteAccess.allowedHosts = [...new Set(hosts.map((host: string) => host.trim().toLowerCase()))];
    } else {
      issues.push({ field: 'remoteAccess.allowedHosts', message: `The allowed host names must be a list of names such as factory.example.com, not ${quote(hosts)}` });
    }
  }
  next.worktreeRetentionDays = readInteger(input, 'worktreeRetentionDays', 'worktreeRetentionDays', { min: 0, max: 3650, unit: 'days', note: '(0 keeps them until deleted)', subject: 'The worktree retention' }, issues) ?? next.worktreeRetentionDays;
  next.maxParallelRuns = readInteger(input, 'maxParallelRuns', 'maxParallelRuns', { min: 1, max: 64, subject: 'The maximum of parallel runs' }, issues) ?? next.maxParallelRuns;
  if (patch.defaultHarnessId !== undefined && patch.defaultHarnessId !== null) {
    if (typeof patch.defaultHarnessId === 'string') next.defaultHarnessId = patch.defaultHarnessId.trim() || undefined;
    else issues.push({ field: 'defaultHarnessId', message: `The default harness must be a harness id, not ${quote(patch.defaultHarnessId)}` });
  }
  if (patch.theme !== undefined) {
    if (patch.theme === 'system' || patch.theme === 'light' || patch.theme === 'dark') next.theme = patch.theme;
    else issues.push({ field: 'theme', message: `The theme must be system, light or dark, not ${quote(patch.theme)}` });
  }
  const spendLimit = readSpendLimit(patch.spendLimitUsdPerDay, current.spendLimitUsdPerDay, issues);
  if (spendLimit === undefined) delete next.spendLimitUsdPerDay;
  else next.spendLimitUsdPerDay = spendLimit;
  if (issues.length > 0) throw new ValidationError(issues, 'Settings not saved:');
  return next;
}

/**
 * Checks a project from any door and returns a clean copy (unknown fields dropped). An empty or
 * missing id means a new project: the caller assigns one. Whether the folder exists is the
 * caller's check (it needs the file system).
 */
export function validateProject(input: unknown): ProjectInput {
  if (!isRecord(input)) throw new ValidationError(`A project must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const project: ProjectInput = { name: '', path: '', worktrees: false };
  if (input.id !== undefined && input.id !== null && input.id !== '') {
    if (isId(input.id, 'prj')) project.id = input.id;
    else issues.push({ field: 'id', message: `The id ${quote(input.id)} is not a project id` });
  }
  project.name = readText(input, 'name', 'name', { max: 200, trim: true, required: 'The name is empty: a project needs a name', subject: 'The name' }, issues) ?? '';
  if (typeof input.path === 'string' && input.path.includes('\0')) issues.push({ field: 'path', message: `The folder ${nulCharacterMessage}` });
  else if (typeof input.path === 'string' && input.path.trim().startsWith('/')) project.path = input.path.trim();
  else if (typeof input.path === 'string' && !input.path.trim()) issues.push({ field: 'path', message: 'The folder is empty: choose the folder of the project' });
  else issues.push({ field: 'path', message: `The folder must be an absolute path such as /home/me/app, not ${quote(input.path)}` });
  project.worktrees = readBoolean(input, 'worktrees', 'worktrees', issues, 'The worktree switch') ?? false;
  const runnerId = readRunnerId(input, 'runnerId', issues);
  if (runnerId !== undefined) project.runnerId = runnerId;
  if (input.setupCommand !== undefined && input.setupCommand !== null) {
    if (typeof input.setupCommand === 'string' && input.setupCommand.includes('\0')) {
      issues.push({ field: 'setupCommand', message: `The setup command ${nulCharacterMessage}` });
    } else if (typeof input.setupCommand === 'string') {
      if (input.setupCommand.trim()) project.setupCommand = input.setupCommand;
    } else issues.push({ field: 'setupCommand', message: `The setup command must be text, not ${quote(input.setupCommand)}` });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'Project not saved:');
  return project;
}
