// Settings and projects: defaults and validation of untrusted input (from any door).

import type { ProjectInput, Settings, SettingsInput } from './api';
import { ValidationError, quote, type ValidationIssue } from './errors';
import { isId } from './ids';
import { nulCharacterMessage } from './template';

export const defaultSettings: Settings = {
  webhookServer: { enabled: false, host: '127.0.0.1', port: 7717 },
  remoteAccess: { enabled: false, host: '127.0.0.1', port: 7718, allowedHosts: [] },
  maxParallelRuns: 2,
  worktreeRetentionDays: 7,
  theme: 'system',
};

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// A host name or an IP literal: what a server may listen on, or a Host header may name.
const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** `words`: the server as a message names it ("The webhook server"). */
function readServer(
  input: unknown, current: Settings['webhookServer'], field: string, words: string, issues: ValidationIssue[],
): Settings['webhookServer'] {
  if (input === undefined || input === null) return current;
  if (!isPlainObject(input)) {
    issues.push({ field, message: `${words} settings must be an object with enabled, host and port, not ${quote(input)}` });
    return current;
  }
  const next = { ...current };
  if (input.enabled !== undefined) {
    if (typeof input.enabled === 'boolean') next.enabled = input.enabled;
    else issues.push({ field: `${field}.enabled`, message: `${words} switch must be true or false, not ${quote(input.enabled)}` });
  }
  if (input.host !== undefined) {
    if (typeof input.host === 'string' && input.host.trim().length <= 253 && hostPattern.test(input.host.trim())) next.host = input.host.trim();
    else issues.push({ field: `${field}.host`, message: `${words} address must be an address such as 127.0.0.1 or 0.0.0.0, not ${quote(input.host)}` });
  }
  if (input.port !== undefined) {
    if (Number.isInteger(input.port) && (input.port as number) >= 1 && (input.port as number) <= 65535) next.port = input.port as number;
    else issues.push({ field: `${field}.port`, message: `${words} port must be a whole number from 1 to 65535, not ${quote(input.port)}` });
  }
  return next;
}

/**
 * Applies a partial settings object to `current` and returns the result. Every field is checked;
 * all problems are reported together as one ValidationError. Unknown fields are ignored.
 */
export function mergeSettings(current: Settings, input: unknown): Settings {
  if (!isPlainObject(input)) throw new ValidationError(`Settings must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const patch = input as SettingsInput & Record<string, unknown>;
  const next: Settings = {
    ...current,
    webhookServer: readServer(patch.webhookServer, current.webhookServer, 'webhookServer', 'The webhook server', issues),
    remoteAccess: { ...current.remoteAccess, ...readServer(patch.remoteAccess, current.remoteAccess, 'remoteAccess', 'The remote access', issues) },
  };
  const remote = patch.remoteAccess as Record<string, unknown> | undefined;
  if (isPlainObject(remote) && remote.allowedHosts !== undefined) {
    const hosts = remote.allowedHosts;
    if (Array.isArray(hosts) && hosts.length <= 50 && hosts.every((host) => typeof host === 'string' && hostPattern.test(host.trim()))) {
      next.remoteAccess.allowedHosts = [...new Set(hosts.map((host: string) => host.trim().toLowerCase()))];
    } else {
      issues.push({ field: 'remoteAccess.allowedHosts', message: `The allowed host names must be a list of names such as factory.example.com, not ${quote(hosts)}` });
    }
  }
  if (patch.worktreeRetentionDays !== undefined) {
    const value = patch.worktreeRetentionDays;
    if (Number.isInteger(value) && value >= 0 && value <= 3650) next.worktreeRetentionDays = value;
    else issues.push({ field: 'worktreeRetentionDays', message: `The worktree retention must be a whole number of days from 0 (keep until deleted) to 3650, not ${quote(value)}` });
  }
  if (patch.maxParallelRuns !== undefined) {
    const value = patch.maxParallelRuns;
    if (Number.isInteger(value) && value >= 1 && value <= 64) next.maxParallelRuns = value;
    else issues.push({ field: 'maxParallelRuns', message: `The maximum of parallel runs must be a whole number from 1 to 64, not ${quote(value)}` });
  }
  if (patch.defaultHarnessId !== undefined && patch.defaultHarnessId !== null) {
    if (typeof patch.defaultHarnessId === 'string') next.defaultHarnessId = patch.defaultHarnessId.trim() || undefined;
    else issues.push({ field: 'defaultHarnessId', message: `The default harness must be a harness id, not ${quote(patch.defaultHarnessId)}` });
  }
  if (patch.theme !== undefined) {
    if (patch.theme === 'system' || patch.theme === 'light' || patch.theme === 'dark') next.theme = patch.theme;
    else issues.push({ field: 'theme', message: `The theme must be system, light or dark, not ${quote(patch.theme)}` });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'Settings not saved:');
  return next;
}

/**
 * Checks a project from any door and returns a clean copy (unknown fields dropped). An empty or
 * missing id means a new project: the caller assigns one. Whether the folder exists is the
 * caller's check (it needs the file system).
 */
export function validateProject(input: unknown): ProjectInput {
  if (!isPlainObject(input)) throw new ValidationError(`A project must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const project: ProjectInput = { name: '', path: '', worktrees: false };
  if (input.id !== undefined && input.id !== null && input.id !== '') {
    if (isId(input.id, 'prj')) project.id = input.id;
    else issues.push({ field: 'id', message: `The id ${quote(input.id)} is not a project id` });
  }
  if (typeof input.name === 'string' && input.name.includes('\0')) issues.push({ field: 'name', message: `The name ${nulCharacterMessage}` });
  else if (typeof input.name === 'string' && input.name.trim() && input.name.trim().length <= 200) project.name = input.name.trim();
  else issues.push({ field: 'name', message: 'The name is empty or too long: a project needs a name of up to 200 characters' });
  if (typeof input.path === 'string' && input.path.includes('\0')) issues.push({ field: 'path', message: `The folder ${nulCharacterMessage}` });
  else if (typeof input.path === 'string' && input.path.trim().startsWith('/')) project.path = input.path.trim();
  else if (typeof input.path === 'string' && !input.path.trim()) issues.push({ field: 'path', message: 'The folder is empty: choose the folder of the project' });
  else issues.push({ field: 'path', message: `The folder must be an absolute path such as /home/me/app, not ${quote(input.path)}` });
  if (input.worktrees !== undefined) {
    if (typeof input.worktrees === 'boolean') project.worktrees = input.worktrees;
    else issues.push({ field: 'worktrees', message: `The worktree switch must be true or false, not ${quote(input.worktrees)}` });
  }
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
