// Claude Code keeps each session's transcript under its config folder, in a folder named after the
// working folder (PROVIDERS.md §7), and `--resume <id>` looks only there (2.1.x also tries the
// project folders of the repository's live git worktrees, not of removed ones). A follow-up runs in
// a new worktree, so the transcript is copied to the new folder's project folder before resuming.
// The rule below is the CLI's own (checked in @anthropic-ai/claude-code 2.1.197): every character
// that is not an ASCII letter or digit becomes `-`; a name longer than 200 characters is cut to 200
// and gets `-` and a 31-bit string hash of the whole path in base 36.

import { constants } from 'node:fs';
import { copyFile, cp, mkdir, readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { realpathOrSelf } from '../engine/workspace';

const maxFolderNameLength = 200;
/** Claude Code resumes only by UUID in print mode; anything else is never used as a file name. */
const sessionIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Claude Code's config folder for a step's environment: CLAUDE_CONFIG_DIR, else `<HOME>/.claude`. */
function claudeConfigFolder(environment: Readonly<Record<string, string | undefined>>): string {
  return (environment.CLAUDE_CONFIG_DIR || join(environment.HOME || homedir(), '.claude')).normalize('NFC');
}

/** The folder Claude Code keeps the sessions of working folder `cwd` in (an absolute, real path). */
export function claudeProjectFolder(configFolder: string, cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  const short = name.length <= maxFolderNameLength ? name : `${name.slice(0, maxFolderNameLength)}-${Math.abs(stringHash(cwd)).toString(36)}`;
  return join(configFolder, 'projects', short);
}

/** Java's String.hashCode over UTF-16 code units, as a signed 32-bit number (the CLI's hash). */
function stringHash(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++) hash = (hash << 5) - hash + text.charCodeAt(index) | 0;
  return hash;
}

export type CarryResult = { ok: true; copiedFrom?: string } | { ok: false; reason: string };

/**
 * Makes session `sessionId` resumable from `toFolder`: when its transcript is not already in that
 * folder's project folder, copies it there (with the session's side folder of subagent transcripts,
 * when there is one) from the project folder of `fromFolder`, else from whichever project folder
 * holds it. Never overwrites a transcript. `{ ok: false }` says why it cannot: an id that is not a
 * UUID, or no transcript anywhere under the config folder.
 */
export async function carryClaudeTranscript(options: {
  sessionId: string;
  fromFolder?: string;
  toFolder: string;
  environment: Readonly<Record<string, string | undefined>>;
}): Promise<CarryResult> {
  const { sessionId } = options;
  if (!sessionIdPattern.test(sessionId)) return { ok: false, reason: `the session id ${JSON.stringify(sessionId)} is not a UUID` };
  const config = claudeConfigFolder(options.environment);
  const fileName = `${sessionId}.jsonl`;
  const target = join(claudeProjectFolder(config, await realpathOrSelf(options.toFolder)), fileName);
  if (await isFile(target)) return { ok: true };

  const candidates = options.fromFolder ? [options.fromFolder, await realpathOrSelf(options.fromFolder)] : [];
  let source: string | undefined;
  for (const folder of candidates) {
    const path = join(claudeProjectFolder(config, folder), fileName);
    if (await isFile(path)) {
      source = path;
      break;
    }
  }
  source ??= await findInProjects(join(config, 'projects'), fileName);
  if (!source) return { ok: false, reason: `its transcript ${fileName} is not under ${join(config, 'projects')}` };

  await mkdir(join(target, '..'), { recursive: true });
  await copyFile(source, target, constants.COPYFILE_EXCL);
  const sideFolder = source.slice(0, -'.jsonl'.length);
  if (await isFolder(sideFolder)) await cp(sideFolder, target.slice(0, -'.jsonl'.length), { recursive: true, errorOnExist: false, force: false });
  return { ok: true, copiedFrom: source };
}

async function findInProjects(projects: string, fileName: string): Promise<string | undefined> {
  const folders = await readdir(projects, { withFileTypes: true }).catch(() => []);
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    const path = join(projects, folder.name, fileName);
    if (await isFile(path)) return path;
  }
  return undefined;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((info) => info.isFile() && info.size > 0, () => false);
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then((info) => info.isDirectory(), () => false);
}
