// Whose token a connection holds, asked of the service once per token and process. Write-back
// adopts a comment it lost the id of only when this account wrote it (providers/*.ts), so a newer
// comment by someone else that quotes the run's first line is never taken over.

import { createHash } from 'node:crypto';
import type { Connection } from '../core/api';

const answers = new Map<string, Promise<unknown>>();

/**
 * The account behind `connection`'s token as `read` finds it, asked once per service, address and
 * token (the map holds a digest, never the token); a failed read is asked again next time.
 */
export function ownAccount<T>(connection: Connection, read: () => Promise<T>): Promise<T> {
  const key = createHash('sha256').update([connection.kind, connection.baseUrl ?? '', connection.email ?? '', connection.token].join('\n')).digest('hex');
  let answer = answers.get(key) as Promise<T> | undefined;
  if (!answer) {
    answer = read();
    answers.set(key, answer);
    answer.catch(() => answers.delete(key));
  }
  return answer;
}
