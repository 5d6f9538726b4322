// The data folder (DESIGN §5): where each file lives, and how it is read and written.
// Everything that touches the data folder goes through here.

import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Channel, Connection, HarnessDefinition, Pipeline, Project, Runner, Settings, TriggerConfig } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import { isId } from '../core/ids';
import { isRecord } from '../core/validate';
import { removeStaleTempFiles } from './atomic';
import { CorruptFileError, readJsonFile } from './json-file';
import { JsonlAppender } from './jsonl';
import { FileWriter } from './writer';

/** config.json: everything the user configured, in one file written atomically. */
export interface ConfigFile {
  format: 1;
  settings: Settings;
  projects: Project[];
  pipelines: Pipeline[];
  connections: Connection[];
  triggers: TriggerConfig[];
  /** Built-in harnesses: only the fields the user changed, by harness id. */
  harnessOverrides: Record<string, Partial<HarnessDefinition>>;
  customHarnesses: HarnessDefinition[];
  channels: Channel[];
  /** The user's runners; the built-in `local` one is not stored. */
  runners: Runner[];
}

const listKeys = ['projects', 'pipelines', 'connections', 'triggers', 'customHarnesses', 'channels', 'runners'] as const;

export class DataStore {
  /** Serialised, coalesced atomic replacement of whole files. */
  readonly writer = new FileWriter();
  /** Batched appends to JSON Lines files (logs, inbox). */
  readonly appender = new JsonlAppender();

  constructor(readonly dir: string) {}

  get configPath(): string {
    return join(this.dir, 'config.json');
  }

  /**
   * Creates the folder layout and removes temp files a crash left behind. A new data folder is
   * private (0700): it holds issue bodies, logs and tokens. An existing one keeps its permissions.
   */
  async open(): Promise<void> {
    await mkdir(dirname(resolve(this.dir)), { recursive: true });
    await mkdir(this.dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    for (const folder of ['runs', 'triggers', 'worktrees', 'projects']) await mkdir(join(this.dir, folder), { recursive: true });
    await removeStaleTempFiles(this.dir);
  }

  /**
   * Reads config.json: undefined on a first start (no file). A file that does not parse, or is
   * not a Factory configuration, throws CorruptFileError naming it: it is never overwritten.
   */
  async readConfig(): Promise<ConfigFile | undefined> {
    const raw = await readJsonFile<unknown>(this.configPath);
    if (raw === undefined) return undefined;
    if (!isRecord(raw) || raw.format !== 1 || !isRecord(raw.settings)) {
      throw new CorruptFileError(this.configPath, 'it is not a Factory configuration (format 1 with settings)');
    }
    for (const key of listKeys) {
      if (raw[key] === undefined) raw[key] = [];
      else if (!Array.isArray(raw[key])) throw new CorruptFileError(this.configPath, `the field ${key} is not a list`);
    }
    if (!isRecord(raw.harnessOverrides)) raw.harnessOverrides = {};
    return raw as unknown as ConfigFile;
  }

  /** Writes config.json durably; resolves once this content (or newer) is on disk. */
  writeConfig(config: ConfigFile): Promise<void> {
    return this.writer.write(this.configPath, () => JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  }

  /** remote.json: the access token and the signed-in sessions (undefined before the first start). */
  readRemote(): Promise<unknown> {
    return readJsonFile<unknown>(join(this.dir, 'remote.json'));
  }

  /** Writes remote.json durably, readable by the owner only. */
  writeRemote(state: unknown): Promise<void> {
    return this.writer.write(join(this.dir, 'remote.json'), JSON.stringify(state) + '\n', { mode: 0o600 });
  }

  private triggerPath(triggerId: string): string {
    if (!isId(triggerId, 'trg')) throw new ValidationError(`Not a trigger id: ${quote(triggerId)}`);
    return join(this.dir, 'triggers', `${triggerId}.json`);
  }

  /** triggers/<id>.json: a trigger's state and dedup keys (undefined when there is none yet). */
  readTriggerFile(triggerId: string): Promise<unknown> {
    return readJsonFile<unknown>(this.triggerPath(triggerId));
  }

  /** Writes triggers/<id>.json durably (coalesced: the latest content wins). */
  writeTriggerFile(triggerId: string, content: () => unknown): Promise<void> {
    return this.writer.write(this.triggerPath(triggerId), () => JSON.stringify(content()) + '\n', { mode: 0o600 });
  }

  async deleteTriggerFile(triggerId: string): Promise<void> {
    const path = this.triggerPath(triggerId);
    await this.writer.flush();
    await rm(path, { force: true });
  }

  /** agent-sessions.json: the Linear agent sessions and what was posted to them (undefined before the first). */
  readAgentSessions(): Promise<unknown> {
    return readJsonFile<unknown>(join(this.dir, 'agent-sessions.json'));
  }

  /** Writes agent-sessions.json durably (coalesced: the latest content wins). */
  writeAgentSessions(content: () => unknown): Promise<void> {
    return this.writer.write(join(this.dir, 'agent-sessions.json'), () => JSON.stringify(content()) + '\n', { mode: 0o600 });
  }

  /** A folder for a project that Factory made itself (the Demo project). */
  async ensureProjectFolder(name: string): Promise<string> {
    const path = join(this.dir, 'projects', name);
    await mkdir(path, { recursive: true });
    return path;
  }

  /** Waits for every pending write and append, then closes open files. */
  async close(): Promise<void> {
    await this.writer.flush();
    await this.appender.close();
  }
}

export { CorruptFileError };
