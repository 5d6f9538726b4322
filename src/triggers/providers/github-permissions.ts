// Who may ask Factory for a follow-up on a pull request: a reviewer with write access to the
// repository, as GitHub says, asked at most once per 5 minutes per account, repository and login.

import type { Connection } from '../../core/api';
import { isRecord } from '../../core/validate';
import { text } from '../provider';
import { apiRoot, rest } from './github';

/** How long a reviewer's permission is trusted before GitHub is asked again. */
const permissionCacheMs = 5 * 60_000;
/** Roles (GitHub's legacy `permission`) that may start a follow-up run. */
export const writeRoles = ['admin', 'maintain', 'write'];

const permissions = new Map<string, { at: number; permission: string }>();

/**
 * The reviewer's permission on the repository (GitHub's legacy role: admin, write, read, none;
 * maintain counts as write), asked once per 5 minutes; 404 means no access.
 */
export async function permissionOf(connection: Connection, repository: string, login: string): Promise<string> {
  const key = [connection.id, apiRoot(connection), repository.toLowerCase(), login.toLowerCase()].join('\n');
  const now = Date.now();
  const cached = permissions.get(key);
  if (cached && now - cached.at < permissionCacheMs) return cached.permission;
  const answer = await rest(connection, 'GET', `/repos/${repository}/collaborators/${encodeURIComponent(login)}/permission`);
  const permission = answer.status === 200 && isRecord(answer.body) ? text(answer.body.permission) ?? 'none' : 'none';
  if (permissions.size >= 1000) for (const [old, entry] of permissions) if (now - entry.at >= permissionCacheMs) permissions.delete(old);
  permissions.set(key, { at: now, permission });
  return permission;
}
