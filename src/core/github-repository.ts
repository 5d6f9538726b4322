// GitHub repository names: `owner/name`, and how a git remote's URL names one.

/** A repository as `owner/name` (GitHub's letters, digits, `_`, `.` and `-`). */
export const repositoryPattern = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * `owner/name` of a remote URL: `https://host/owner/name(.git)`, `ssh://git@host(:port)/owner/name`,
 * `git@host:owner/name(.git)`; undefined for a local path, a `file://` URL, or a path of another depth.
 */
export function repositoryOfRemote(url: string): string | undefined {
  const trimmed = url.trim();
  const scp = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/)([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(trimmed);
  if (scp) return repositoryPattern.test(scp[1]!) ? scp[1] : undefined;
  if (!/^(https?|ssh|git):\/\//i.test(trimmed)) return undefined;
  let path: string;
  try {
    path = new URL(trimmed).pathname;
  } catch {
    return undefined;
  }
  const match = /^\/([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(path);
  return match && repositoryPattern.test(match[1]!) ? match[1] : undefined;
}
