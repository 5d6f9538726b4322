// Runners (issue 25): where a run's steps execute. `local` (this machine, as the user) is built in;
// the user adds `sandbox` runners (bubblewrap on this machine, engine/sandbox.ts) and `ssh`
// runners (another machine through the system ssh client, engine/ssh.ts). This file checks a
// runner from any door and returns a clean copy; storing it is engine/config.ts's job.

import type { Runner } from './api';
import { ValidationError, quote, type ValidationIssue } from './errors';
import { isId } from './ids';
import { isAbsent, isRecord, own, readBoolean, readInteger, readText, shown } from './validate';

/** The built-in runner: this machine, with the user's own rights. It cannot be changed or deleted. */
export const localRunner: Readonly<Runner> = Object.freeze({ id: 'local', name: 'This computer', kind: 'local' });

/** Where an ssh runner's workspaces go when it names no workDir: relative to the login folder. */
export const defaultRemoteWorkDir = '.factory/work';

/** A host name or an IP literal; never starting with `-`, so ssh cannot take it for an option. */
const hostPattern = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$|^\[?[0-9A-Fa-f:.]+\]?$/;
/** A login name as POSIX systems allow it (portable characters), never starting with `-`. */
const userPattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
/** No control characters: paths go into ssh options and remote shell words. */
const controlCharacters = /[\u0000-\u001f\u007f]/;

/** True when `value` names a runner: `local`, or an id `newId('rnr')` made. */
function isRunnerId(value: unknown): value is string {
  return value === localRunner.id || isId(value, 'rnr');
}

/**
 * Reads an optional `runnerId` (projects, pipelines, triggers): absent is undefined; anything but a
 * runner id is a problem. Whether that runner exists is the caller's check (it has the list).
 */
export function readRunnerId(record: Record<string, unknown>, field: string, issues: ValidationIssue[]): string | undefined {
  const value = own(record, 'runnerId');
  if (isAbsent(value) || value === '') return undefined;
  if (isRunnerId(value)) return value;
  issues.push({ field, message: `The runner must be a runner's id such as local or rnr_…, not ${shown(value)}` });
  return undefined;
}

/** What a runner is checked against: the other runners' names (a name is unique, in any letter case). */
export interface RunnerContext {
  otherNames: readonly string[];
}

/**
 * Checks a runner from any door and returns a clean copy: unknown fields, and fields of another
 * kind (a host on a sandbox runner), are dropped. An empty or missing id means a new runner: the
 * caller assigns one. Refuses, all problems together in one ValidationError: the built-in `local`
 * runner or a new `local` one, an unknown kind, an ssh runner without a host, a host or user that is
 * not one (or starts with `-`), a port out of 1–65535, a workDir or identity file that is not an
 * absolute path, known hosts other than strict or accept-new, a name that is empty, too long or
 * taken.
 */
export function validateRunner(input: unknown, context: RunnerContext): Omit<Runner, 'id'> & { id?: string } {
  if (!isRecord(input)) throw new ValidationError(`A runner must be an object, not ${quote(input)}`);
  const issues: ValidationIssue[] = [];
  const id = own(input, 'id');
  if (id === localRunner.id) throw new ValidationError([{ field: 'id', message: 'The runner `local` (this computer) is built in: it cannot be changed' }], 'Runner not saved:');
  let cleanId: string | undefined;
  if (!isAbsent(id) && id !== '') {
    if (isId(id, 'rnr')) cleanId = id;
    else issues.push({ field: 'id', message: `The id ${shown(id)} is not a runner id` });
  }
  const name = readText(input, 'name', 'name', { max: 100, trim: true, required: 'The name is empty: a runner needs a name', subject: 'The name' }, issues) ?? '';
  if (name && context.otherNames.some((other) => other.toLowerCase() === name.toLowerCase())) {
    issues.push({ field: 'name', message: `The name ${quote(name)} is taken by another runner: choose another` });
  }
  const kind = own(input, 'kind');
  const runner: Omit<Runner, 'id'> & { id?: string } = { ...(cleanId ? { id: cleanId } : {}), name, kind: 'sandbox' };
  if (kind === 'sandbox' || kind === 'ssh') runner.kind = kind;
  else if (kind === 'local') issues.push({ field: 'kind', message: 'A runner of kind local is built in (this computer): choose sandbox or ssh' });
  else issues.push({ field: 'kind', message: `The kind must be sandbox or ssh, not ${shown(kind)}` });

  if (runner.kind === 'sandbox') {
    const network = readBoolean(input, 'network', 'network', issues, 'The network switch');
    if (network !== undefined) runner.network = network;
  }
  if (runner.kind === 'ssh') readSshFields(input, runner, issues);
  const maxParallelRuns = readInteger(input, 'maxParallelRuns', 'maxParallelRuns', { min: 1, max: 64, subject: 'The maximum of parallel runs' }, issues);
  if (maxParallelRuns !== undefined) runner.maxParallelRuns = maxParallelRuns;
  if (issues.length > 0) throw new ValidationError(issues, 'Runner not saved:');
  return runner;
}

function readSshFields(input: Record<string, unknown>, runner: Omit<Runner, 'id'>, issues: ValidationIssue[]): void {
  const host = readText(input, 'host', 'host', { max: 253, trim: true, required: 'The host is empty: an ssh runner needs the name or address of the machine', subject: 'The host' }, issues);
  if (host !== undefined) {
    if (hostPattern.test(host)) runner.host = host;
    else issues.push({ field: 'host', message: `The host must be a host name or an IP address such as build.example.com or 10.0.0.5, not ${quote(host)}` });
  }
  const port = readInteger(input, 'port', 'port', { min: 1, max: 65535, subject: 'The port' }, issues);
  if (port !== undefined) runner.port = port;
  const user = readText(input, 'user', 'user', { max: 64, trim: true, subject: 'The user' }, issues);
  if (user !== undefined) {
    if (userPattern.test(user)) runner.user = user;
    else issues.push({ field: 'user', message: `The user must be a login name of letters, digits, _ . and - (not first), not ${quote(user)}` });
  }
  const identityFile = readAbsolutePath(input, 'identityFile', 'The identity file', issues);
  if (identityFile !== undefined) runner.identityFile = identityFile;
  const knownHosts = own(input, 'knownHosts');
  if (knownHosts === 'strict' || knownHosts === 'accept-new') runner.knownHosts = knownHosts;
  else if (!isAbsent(knownHosts)) issues.push({ field: 'knownHosts', message: `The host key check must be strict or accept-new, not ${shown(knownHosts)}` });
  const workDir = readAbsolutePath(input, 'workDir', 'The work folder', issues);
  if (workDir !== undefined) runner.workDir = workDir;
}

/** An absolute path without control characters; absent or blank is undefined. */
function readAbsolutePath(input: Record<string, unknown>, key: string, subject: string, issues: ValidationIssue[]): string | undefined {
  const path = readText(input, key, key, { max: 1024, trim: true, subject }, issues);
  if (path === undefined) return undefined;
  if (!path.startsWith('/')) {
    issues.push({ field: key, message: `${subject} must be an absolute path such as /srv/factory, not ${quote(path)}` });
    return undefined;
  }
  if (controlCharacters.test(path)) {
    issues.push({ field: key, message: `${subject} holds a control character (a line break, a tab): remove it` });
    return undefined;
  }
  return path;
}

/** The runners a snapshot lists: the built-in one first, then the user's. */
export function allRunners(stored: readonly Runner[]): Runner[] {
  return [{ ...localRunner }, ...stored.map((runner) => ({ ...runner }))];
}
