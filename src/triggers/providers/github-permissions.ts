// Who may ask Factory for a follow-up on a pull request: a reviewer with write access to the
// repository, as GitHub says, asked at most once per 5 minutes per account, repository and login.

import type { Connection } from '../../core/api';
import { isRecord } from '../../core/validate';
import { ExpiringCache } from '../expiring-cache';
import { text } from '../provider';
import { apiRoot, rest } from './github';

/** Roles (GitHub's legacy `permission`) that may start a follow-up run. */
export const writeRoles = ['admin', 'maintain', 'write'];

/** Each reviewer's permission, trusted 5 minutes before GitHub is asked again. */
const permissions = new ExpiringCache<string>(5 * 60_000);

/**
 * The reviewer's permission on the repository (GitHub's legacy role: admin, write, read, none;
 * maintain counts as write), asked once per 5 minutes; 404 means no access.
 */
export function permissionOf(connection: Connection, repository: string, login: string): Promise<string> {
  const key = [connection.id, apiRoot(connection), repository.toLowerCase(), login.toLowerCase()].join('\n');
  return permissions.get(key, async () => {
    const answer = await rest(connection, 'GET', `/repos/${repository}/collaborators/${encodeURIComponent(login)}/permission`);
    return answer.status === 200 && isRecord(answer.body) ? text(answer.body.permission) ?? 'none' : 'none';
  });
}
