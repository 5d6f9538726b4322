// The harnesses (DESIGN §3, spec "Harnesses and text generation"): the built-in ones with the
// user's overrides, the custom ones, which of them are installed, and their models. Built-in
// harnesses are stored as overrides (only the fields that differ from the default); custom ones
// are stored whole under `hrn_` ids.

import { homedir } from 'node:os';
import { delimiter, dirname } from 'node:path';
import type { HarnessDefinition, HarnessStatus } from '../core/api';
import { ConflictError, FactoryError, NotFoundError, ValidationError, quote, type ValidationIssue } from '../core/errors';
import { newId } from '../core/ids';
import { isRecord } from '../core/validate';
import type { ConfigService } from '../engine/config';
import { runProcess } from '../engine/process';
import type { ConfigFile } from '../store/data-store';
import { alternativeCommands, builtInHarnesses, findBuiltInHarness, notInstalledMessage } from './builtins';
import { defaultSearchFolders, findExecutable } from './find-executable';
import { checkCommand, checkDefinition, checkEnvironment, checkModels, checkStringList } from './harness-definition';

/** How long a version command may take before the harness is reported as `timed out`. */
const DEFAULT_VERSION_TIMEOUT_MS = 5000;
/** How long a models command may take (opencode may refresh its catalogue over the network). */
const DEFAULT_MODELS_TIMEOUT_MS = 30_000;
/** Grace between SIGTERM and SIGKILL for a version or models command that overran. */
const KILL_GRACE_MS = 1000;
/** The longest version text kept (the first line of the output). */
const VERSION_MAX_LENGTH = 200;

/** The fields a user may change; `id` and `builtIn` are decided by the service. */
const editableFields = ['name', 'enabled', 'command', 'args', 'promptVia', 'versionArgs', 'modelsArgs', 'resume', 'models', 'output', 'env', 'prices'] as const;
type EditableField = (typeof editableFields)[number];

/** What a new custom harness gets for the fields its input leaves out. */
const customDefaults = { enabled: true, args: [], promptVia: 'stdin', versionArgs: ['--version'], models: [], output: 'text' };

/** A models command that could not run or failed; the message says which command and why. */
class ModelListError extends FactoryError {
  override name = 'ModelListError';
}

export interface HarnessServiceOptions {
  /** The environment CLIs are found and run with (PATH, API keys); default process.env. */
  environment?: Record<string, string | undefined>;
  /** Folders searched after PATH (an app started from a desktop often lacks the user's PATH). */
  searchFolders?: readonly string[];
  versionTimeoutMs?: number;
  modelsTimeoutMs?: number;
  /** Where version and models commands run; default the home folder. */
  workingFolder?: string;
}

export class HarnessService {
  private statuses: Record<string, HarnessStatus> = {};
  private readonly environment: Record<string, string>;
  private readonly searchFolders: readonly string[];
  private readonly versionTimeoutMs: number;
  private readonly modelsTimeoutMs: number;
  private readonly workingFolder: string;

  /** `formats`: the output parsers that exist (src/harness/parsers `outputFormats`); `output` must be one. */
  constructor(private readonly config: ConfigService, private readonly formats: readonly string[], options: HarnessServiceOptions = {}) {
    this.environment = definedEntries(options.environment ?? process.env);
    this.searchFolders = options.searchFolders ?? defaultSearchFolders();
    this.versionTimeoutMs = options.versionTimeoutMs ?? DEFAULT_VERSION_TIMEOUT_MS;
    this.modelsTimeoutMs = options.modelsTimeoutMs ?? DEFAULT_MODELS_TIMEOUT_MS;
    this.workingFolder = options.workingFolder ?? homedir();
  }

  /** Every harness: the built-ins with their overrides applied, then the custom ones. Copies. */
  list(config: Readonly<ConfigFile> = this.config.current): HarnessDefinition[] {
    const builtIns = builtInHarnesses.map((harness) => applyOverride(harness, config.harnessOverrides[harness.id]));
    return [...builtIns, ...config.customHarnesses.map((harness) => structuredClone(harness))];
  }

  /** The harness with this id (a copy); NotFoundError when there is none. */
  get(id: unknown): HarnessDefinition {
    const harness = this.list().find((candidate) => candidate.id === id);
    if (!harness) throw new NotFoundError(`No harness with id ${quote(id)}`);
    return harness;
  }

  /**
   * Creates or updates a harness and returns it as stored. Fields the input leaves out keep their
   * current value (a new custom harness gets customDefaults); `modelsArgs: []`, `resume: []` and `env: {}` clear. A built-in id stores only the fields
   * that differ from the default; an input without id creates a custom harness with a new `hrn_`
   * id; another id must name a custom harness (NotFoundError). ValidationError lists every field
   * that does not fit (see checkDefinition).
   */
  async saveHarness(input: unknown): Promise<HarnessDefinition> {
    if (!isRecord(input)) throw new ValidationError(`A harness must be an object, not ${quote(input)}`);
    const changes = pickEditable(input);
    return this.config.update((config) => {
      const id = input.id;
      const isNew = id === undefined || id === null || id === '';
      const current = isNew ? undefined : this.list(config).find((candidate) => candidate.id === id);
      if (!isNew && !current) throw new NotFoundError(`No harness with id ${quote(id)}`);
      const base = current ?? { ...customDefaults, id: newId('hrn'), builtIn: false };
      const definition = checkDefinition({ ...base, ...changes }, this.formats);
      const saved: HarnessDefinition = { ...definition, id: base.id, builtIn: base.builtIn };
      return { config: putHarness(config, saved), result: saved };
    });
  }

  /**
   * Resets a built-in harness to its default (removes its override) or deletes a custom one.
   * NotFoundError for an unknown id; ConflictError while a pipeline or agent step names the custom harness.
   */
  async deleteHarness(id: unknown): Promise<void> {
    return this.config.update((config) => {
      const harness = this.list(config).find((candidate) => candidate.id === id);
      if (!harness) throw new NotFoundError(`No harness with id ${quote(id)}`);
      delete this.statuses[harness.id];
      if (harness.builtIn) {
        if (!(harness.id in config.harnessOverrides)) return { config, result: undefined };
        const { [harness.id]: _removed, ...harnessOverrides } = config.harnessOverrides;
        return { config: { ...config, harnessOverrides }, result: undefined };
      }
      const users = config.pipelines.filter((pipeline) =>
        pipeline.harnessId === harness.id || pipeline.steps.some((step) => step.kind === 'agent' && step.harnessId === harness.id));
      if (users.length > 0) {
        throw new ConflictError(`Harness ${quote(harness.name)} is used by the pipeline${users.length === 1 ? '' : 's'} ${users.map((pipeline) => quote(pipeline.name)).join(', ')}: choose another harness there first`);
      }
      return { config: { ...config, customHarnesses: config.customHarnesses.filter((candidate) => candidate.id !== harness.id) }, result: undefined };
    });
  }

  /** Enables or disables a harness (a disabled one is neither detected nor offered). */
  async setHarnessEnabled(id: unknown, enabled: unknown): Promise<void> {
    if (typeof enabled !== 'boolean') throw new ValidationError([{ field: 'enabled', message: `The switch must be true or false, not ${quote(enabled)}` }]);
    return this.config.update((config) => {
      const harness = this.list(config).find((candidate) => candidate.id === id);
      if (!harness) throw new NotFoundError(`No harness with id ${quote(id)}`);
      if (harness.enabled === enabled) return { config, result: undefined };
      if (!enabled) delete this.statuses[harness.id];
      return { config: putHarness(config, { ...harness, enabled }), result: undefined };
    });
  }

  /** The latest detection results by harness id (for the snapshot); empty before the first detection. */
  status(): Record<string, HarnessStatus> {
    return structuredClone(this.statuses);
  }

  /**
   * Finds every enabled harness's command and runs its version command, all at once. Never
   * rejects and never waits longer than the version timeout (plus the kill grace) for a CLI: one
   * that hangs reports `error: 'timed out'`. The result replaces the cached status.
   */
  async detectHarnesses(): Promise<Record<string, HarnessStatus>> {
    const harnesses = this.list().filter((harness) => harness.enabled);
    const results = await Promise.all(harnesses.map(async (harness) => [harness.id, await this.detect(harness)] as const));
    this.statuses = Object.fromEntries(results);
    return this.status();
  }

  /**
   * The models of a definition that need not be saved: the output of its models command, one
   * model per non-empty line (its first word), or `models` when it has no models command.
   * ValidationError for a malformed command or args; ModelListError when the command fails.
   */
  async listModels(input: unknown): Promise<string[]> {
    if (!isRecord(input)) throw new ValidationError(`A harness must be an object, not ${quote(input)}`);
    const issues: ValidationIssue[] = [];
    const command = checkCommand(input.command, issues);
    const modelsArgs = input.modelsArgs === undefined ? undefined : checkStringList('modelsArgs', input.modelsArgs, issues);
    const models = input.models === undefined ? [] : checkModels(input.models, issues);
    const env = checkEnvironment(input.env, issues);
    if (issues.length > 0) throw new ValidationError(issues, 'Cannot list models:');
    if (!modelsArgs || modelsArgs.length === 0) return models;

    const path = await this.resolveCommand({ id: String(input.id ?? ''), builtIn: input.builtIn === true, command });
    const commandLine = [command, ...modelsArgs].join(' ');
    if (!path) throw new ModelListError(`\`${command}\` was not found on PATH or in ${this.searchFolders.join(', ')}`);
    const errors: string[] = [];
    const result = await runProcess({
      command: path, args: modelsArgs, cwd: this.workingFolder, env: this.environmentFor(path, env),
      timeoutMs: this.modelsTimeoutMs, killGraceMs: KILL_GRACE_MS,
      onLine: (line, stream) => { if (stream === 'err' && line.trim() && errors.length < 3) errors.push(line.trim()); },
    });
    if (result.spawnError) throw new ModelListError(`\`${commandLine}\` could not start: ${result.spawnError}`);
    if (result.timedOut) throw new ModelListError(`\`${commandLine}\` timed out after ${this.modelsTimeoutMs / 1000} s`);
    if (result.exitCode !== 0) throw new ModelListError(`\`${commandLine}\` failed (exit code ${result.exitCode ?? result.signal})${errors.length ? ': ' + errors.join(' ') : ''}`);
    return parseModelList(result.output);
  }

  /** Fetches the harness's models (listModels) and saves them into its definition; returns it. */
  async refreshModels(id: unknown): Promise<HarnessDefinition> {
    const models = await this.listModels(this.get(id));
    return this.config.update((config) => {
      const harness = this.list(config).find((candidate) => candidate.id === id);
      if (!harness) throw new NotFoundError(`No harness with id ${quote(id)}`);
      const saved = { ...harness, models };
      return { config: putHarness(config, saved), result: saved };
    });
  }

  /**
   * The absolute path of a harness's command: a path as given, else the first executable of that
   * name on PATH, then in the search folders. A built-in whose command the user did not change
   * also tries its alternative names (`cursor-agent`). Undefined when none is found.
   */
  async resolveCommand(harness: Pick<HarnessDefinition, 'id' | 'builtIn' | 'command'>): Promise<string | undefined> {
    const unchanged = harness.builtIn && findBuiltInHarness(harness.id)?.command === harness.command;
    const names = [harness.command, ...(unchanged ? alternativeCommands[harness.id] ?? [] : [])];
    for (const name of names) {
      const path = await findExecutable(name, this.environment.PATH ?? '', this.searchFolders);
      if (path) return path;
    }
    return undefined;
  }

  /** The environment a harness's command runs with: ours, its folder added to PATH, then its own `env`. */
  environmentFor(commandPath: string, harnessEnvironment?: Record<string, string>): Record<string, string> {
    const folders = (this.environment.PATH ?? '').split(delimiter).filter(Boolean);
    const folder = dirname(commandPath);
    const PATH = folders.includes(folder) ? folders.join(delimiter) : [...folders, folder].join(delimiter);
    return { ...this.environment, PATH, ...harnessEnvironment };
  }

  private async detect(harness: HarnessDefinition): Promise<HarnessStatus> {
    const path = await this.resolveCommand(harness);
    if (!path) return { installed: false, error: notInstalledMessage(harness) };
    const lines: { out: string[]; err: string[] } = { out: [], err: [] };
    const result = await runProcess({
      command: path, args: harness.versionArgs, cwd: this.workingFolder, env: this.environmentFor(path, harness.env),
      timeoutMs: this.versionTimeoutMs, killGraceMs: KILL_GRACE_MS, outputLimit: 65_536,
      onLine: (line, stream) => { if (line.trim() && lines[stream].length < 3) lines[stream].push(line.trim()); },
    });
    if (result.spawnError) return { installed: true, path, error: result.spawnError };
    if (result.timedOut) return { installed: true, path, error: 'timed out' };
    const firstLine = (lines.out[0] ?? lines.err[0] ?? '').slice(0, VERSION_MAX_LENGTH);
    if (result.exitCode !== 0) {
      return { installed: true, path, error: `\`${[harness.command, ...harness.versionArgs].join(' ')}\` failed (exit code ${result.exitCode ?? result.signal})${lines.err[0] ? ': ' + lines.err[0] : ''}` };
    }
    return firstLine ? { installed: true, path, version: firstLine } : { installed: true, path };
  }
}

/**
 * Reads a models command's output: one model per non-empty line, its first word (so `gpt-5 -
 * GPT-5` gives `gpt-5`), without colour codes, list bullets and header lines ending in `:`.
 * Duplicates are dropped; the order is kept.
 */
function parseModelList(output: string): string[] {
  const models = new Set<string>();
  for (const rawLine of output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split(/\r?\n/)) {
    const line = rawLine.trim().replace(/^[-*•]\s+/, '');
    if (!line || line.endsWith(':')) continue;
    const model = line.split(/\s+/)[0]!;
    if (/[A-Za-z0-9]/.test(model)) models.add(model);
  }
  return [...models];
}

function pickEditable(input: Record<string, unknown> | Partial<HarnessDefinition> | undefined): Partial<Record<EditableField, unknown>> {
  const picked: Partial<Record<EditableField, unknown>> = {};
  if (!input) return picked;
  for (const field of editableFields) {
    if (field in input && (input as Record<string, unknown>)[field] !== undefined) picked[field] = structuredClone((input as Record<string, unknown>)[field]);
  }
  return picked;
}

/** A built-in with its stored override; an empty `modelsArgs` or `resume` in the override means "none". */
function applyOverride(builtIn: HarnessDefinition, override: Partial<HarnessDefinition> | undefined): HarnessDefinition {
  const merged = { ...structuredClone(builtIn), ...pickEditable(override), id: builtIn.id, builtIn: true } as HarnessDefinition;
  if (merged.modelsArgs?.length === 0) delete merged.modelsArgs;
  if (merged.resume?.length === 0) delete merged.resume;
  if (merged.env && Object.keys(merged.env).length === 0) delete merged.env;
  if (merged.prices && Object.keys(merged.prices).length === 0) delete merged.prices;
  return merged;
}

/** The fields of `definition` that differ from the built-in default. */
function overrideOf(builtIn: HarnessDefinition, definition: HarnessDefinition): Partial<HarnessDefinition> {
  const override: Record<string, unknown> = {};
  const emptyOf = (field: EditableField) => (field === 'modelsArgs' || field === 'resume' ? [] : field === 'env' || field === 'prices' ? {} : undefined);
  for (const field of editableFields) {
    const value = definition[field] ?? emptyOf(field);
    if (JSON.stringify(value) !== JSON.stringify(builtIn[field] ?? emptyOf(field))) override[field] = value;
  }
  return override as Partial<HarnessDefinition>;
}

/** Stores a whole definition: as the built-in's override (removed when nothing differs) or as a custom harness. */
function putHarness(config: ConfigFile, definition: HarnessDefinition): ConfigFile {
  const builtIn = definition.builtIn ? findBuiltInHarness(definition.id) : undefined;
  if (builtIn) {
    const override = overrideOf(builtIn, definition);
    const { [definition.id]: _previous, ...others } = config.harnessOverrides;
    const harnessOverrides = Object.keys(override).length > 0 ? { ...others, [definition.id]: override } : others;
    return { ...config, harnessOverrides };
  }
  const index = config.customHarnesses.findIndex((candidate) => candidate.id === definition.id);
  const customHarnesses = index < 0 ? [...config.customHarnesses, definition] : config.customHarnesses.with(index, definition);
  return { ...config, customHarnesses };
}

function definedEntries(environment: Record<string, string | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) if (value !== undefined) result[name] = value;
  return result;
}
