// The configuration: settings, projects and pipelines (and, for later services, the other lists
// of config.json). Every change is validated first, written durably, and only then applied in
// memory, so a failed change leaves nothing half-written.

import { stat } from 'node:fs/promises';
import type { FieldMessage, Pipeline, PipelineCheck, PipelineTemplateId, Project, Runner, SavedPipeline, Settings } from '../core/api';
import { pipelineTemplateIds } from '../core/api';
import { ConflictError, NotFoundError, ValidationError, quote } from '../core/errors';
import { newId } from '../core/ids';
import { checkPipeline, pipelineWarnings, validatePipeline } from '../core/pipeline';
import { duplicatePipeline, exportPipeline, parsePipelineExport } from '../core/pipeline-export';
import { pipelineFromTemplate } from '../core/pipeline-templates';
import { localRunner, validateRunner } from '../core/runners';
import { defaultSettings, mergeSettings, validateProject } from '../core/settings';
import type { ConfigFile, DataStore } from '../store/data-store';

/** Harness ids every installation knows (the built-in harnesses). */
export const builtInHarnessIds = ['claude', 'codex', 'gemini', 'opencode', 'cursor', 'amp'] as const;

type ConfigListener = (previous: ConfigFile, next: ConfigFile) => void;

interface ConfigOptions {
  /** Settings that apply to this start only (command-line flags); not written unless saved. */
  overrides?: unknown;
  now?: () => number;
}

export class ConfigService {
  private config: ConfigFile;
  /** The settings config.json holds: without the flags of this start until the settings are saved. */
  private writtenSettings: Settings;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<ConfigListener>();
  private readonly now: () => number;
  private moreWarnings: (pipeline: Pipeline, config: Readonly<ConfigFile>) => FieldMessage[] = () => [];

  private constructor(private readonly store: DataStore, config: ConfigFile, writtenSettings: Settings, now: () => number) {
    this.config = config;
    this.writtenSettings = writtenSettings;
    this.now = now;
  }

  /**
   * Loads config.json, or on a first start creates the Demo project and the demo pipeline
   * (DESIGN §4) and writes them. A corrupt file throws (CorruptFileError) and is left untouched.
   */
  static async open(store: DataStore, options: ConfigOptions = {}): Promise<ConfigService> {
    const now = options.now ?? Date.now;
    let config = await store.readConfig();
    if (!config) {
      const demoPath = await store.ensureProjectFolder('demo');
      const project: Project = { id: newId('prj'), name: 'Demo', path: demoPath, worktrees: false };
      config = {
        format: 1,
        settings: structuredClone(defaultSettings),
        projects: [project],
        pipelines: [pipelineFromTemplate('demo', project.id, now())],
        connections: [],
        triggers: [],
        harnessOverrides: {},
        customHarnesses: [],
        channels: [],
        runners: [],
      };
      await store.writeConfig(config);
    } else {
      config.settings = mergeSettings(structuredClone(defaultSettings), config.settings);
    }
    const writtenSettings = config.settings;
    if (options.overrides !== undefined) config = { ...config, settings: mergeSettings(config.settings, options.overrides) };
    return new ConfigService(store, config, writtenSettings, now);
  }

  /** The current configuration. Treat it as read-only: changes go through the methods. */
  get current(): Readonly<ConfigFile> {
    return this.config;
  }

  get settings(): Settings {
    return this.config.settings;
  }

  /** Called after every applied change with the configuration before and after it. */
  subscribe(listener: ConfigListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `change` on the current configuration, one change at a time; writes its result durably,
   * then applies it. `change` must not mutate its argument; it may throw to refuse. A change that
   * leaves the settings alone writes them as config.json has them, so the flags of this start
   * reach the file only through saveSettings.
   */
  update<T>(change: (config: ConfigFile) => { config: ConfigFile; result: T }): Promise<T> {
    const run = this.queue.then(async () => {
      const previous = this.config;
      const { config, result } = change(previous);
      if (config !== previous) {
        const settings = config.settings === previous.settings ? this.writtenSettings : config.settings;
        await this.store.writeConfig({ ...config, settings });
        this.writtenSettings = settings;
        this.config = config;
        for (const listener of this.listeners) listener(previous, config);
      }
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every change queued so far has been written (or refused). */
  async idle(): Promise<void> {
    await this.queue;
  }

  // ─── Settings ───

  saveSettings(input: unknown): Promise<Settings> {
    return this.update((config) => {
      const settings = mergeSettings(config.settings, input);
      return { config: { ...config, settings }, result: settings };
    });
  }

  // ─── Projects ───

  getProject(id: unknown): Project {
    const project = this.config.projects.find((candidate) => candidate.id === id);
    if (!project) throw new NotFoundError(`No project with id ${quote(id)}`);
    return project;
  }

  async saveProject(input: unknown): Promise<Project> {
    const clean = validateProject(input);
    const info = await stat(clean.path).catch(() => undefined);
    if (!info?.isDirectory()) throw new ValidationError([{ field: 'path', message: `The folder ${quote(clean.path)} does not exist: choose an existing folder` }], 'Project not saved:');
    return this.update((config) => {
      if (clean.runnerId && clean.runnerId !== localRunner.id && !config.runners.some((runner) => runner.id === clean.runnerId)) {
        throw new ValidationError([{ field: 'runnerId', message: `The runner ${quote(clean.runnerId)} does not exist: choose one from Settings → Runners` }], 'Project not saved:');
      }
      if (clean.id) {
        const index = config.projects.findIndex((project) => project.id === clean.id);
        if (index < 0) throw new NotFoundError(`No project with id ${quote(clean.id)}`);
        const project: Project = { ...clean, id: clean.id };
        const projects = config.projects.with(index, project);
        return { config: { ...config, projects }, result: project };
      }
      const project: Project = { ...clean, id: newId('prj') };
      return { config: { ...config, projects: [...config.projects, project] }, result: project };
    });
  }

  deleteProject(id: unknown): Promise<void> {
    return this.update((config) => {
      const project = this.getProject(id);
      const pipelines = config.pipelines.filter((pipeline) => pipeline.projectId === project.id);
      if (pipelines.length > 0) {
        throw new ConflictError(`Project ${quote(project.name)} still has ${pipelines.length} pipeline${pipelines.length === 1 ? '' : 's'} (${pipelines.map((pipeline) => pipeline.name).join(', ')}): delete or move them first`);
      }
      return { config: { ...config, projects: config.projects.filter((candidate) => candidate.id !== project.id) }, result: undefined };
    });
  }

  // ─── Pipelines ───

  getPipeline(id: unknown): Pipeline {
    const pipeline = this.config.pipelines.find((candidate) => candidate.id === id);
    if (!pipeline) throw new NotFoundError(`No pipeline with id ${quote(id)}`);
    return pipeline;
  }

  harnessIds(config: ConfigFile = this.config): string[] {
    return [...builtInHarnessIds, ...config.customHarnesses.map((harness) => harness.id)];
  }

  private context(config: ConfigFile) {
    return {
      projectIds: config.projects.map((project) => project.id), harnessIds: this.harnessIds(config),
      connections: config.connections.map(({ id, kind, name }) => ({ id, kind, name })),
      runnerIds: config.runners.map((runner) => runner.id),
    };
  }

  private putPipeline(config: ConfigFile, pipeline: Pipeline): ConfigFile {
    const index = config.pipelines.findIndex((candidate) => candidate.id === pipeline.id);
    const pipelines = index < 0 ? [...config.pipelines, pipeline] : config.pipelines.with(index, pipeline);
    return { ...config, pipelines };
  }

  /**
   * Validates and stores a pipeline. The answer is the stored pipeline plus `warnings` (always
   * present, maybe empty): problems that do not block saving, for the editor to show at their
   * fields. The warnings are not stored.
   */
  savePipeline(input: unknown): Promise<SavedPipeline> {
    return this.update((config) => {
      const pipeline = validatePipeline(input, this.context(config), this.now());
      const existing = config.pipelines.find((candidate) => candidate.id === pipeline.id);
      if (!existing && (input as { id?: unknown }).id) throw new NotFoundError(`No pipeline with id ${quote(pipeline.id)}`);
      if (existing) pipeline.createdAt = existing.createdAt;
      return { config: this.putPipeline(config, pipeline), result: { ...pipeline, warnings: [...pipelineWarnings(pipeline), ...this.moreWarnings(pipeline, config)] } };
    });
  }

  /** What saving `input` would refuse and warn about; changes nothing. */
  checkPipeline(input: unknown): PipelineCheck {
    const check = checkPipeline(input, this.context(this.config), this.now());
    if (check.problems.length > 0) return check;
    // What `warnAlso` adds, about the pipeline as it would be saved.
    return { ...check, warnings: [...check.warnings, ...this.moreWarnings(validatePipeline(input, this.context(this.config), this.now()), this.config)] };
  }

  /**
   * Adds warnings about a pipeline being saved or checked that need more than the configuration
   * (app.ts: the budget caps its steps' CLIs cannot be held to, from the harness definitions).
   */
  warnAlso(check: (pipeline: Pipeline, config: Readonly<ConfigFile>) => FieldMessage[]): void {
    this.moreWarnings = check;
  }

  createPipelineFromTemplate(templateId: unknown, projectId?: unknown): Promise<Pipeline> {
    return this.update((config) => {
      if (!pipelineTemplateIds.includes(templateId as PipelineTemplateId)) {
        throw new ValidationError(`Unknown pipeline template ${quote(templateId)}: choose one of ${pipelineTemplateIds.join(', ')}`);
      }
      const project = projectId === undefined || projectId === null || projectId === '' ? config.projects[0] : this.getProject(projectId);
      if (!project) throw new ConflictError('Create a project first: a pipeline belongs to a project');
      // With a GitHub account, the work ends as a pull request through the first one.
      const github = config.connections.find((connection) => connection.kind === 'github');
      const pipeline = pipelineFromTemplate(templateId as PipelineTemplateId, project.id, this.now(), github?.id);
      return { config: this.putPipeline(config, pipeline), result: pipeline };
    });
  }

  duplicatePipeline(id: unknown): Promise<Pipeline> {
    return this.update((config) => {
      const copy = duplicatePipeline(this.getPipeline(id), this.now());
      return { config: this.putPipeline(config, copy), result: copy };
    });
  }

  deletePipeline(id: unknown): Promise<void> {
    return this.update((config) => {
      const pipeline = this.getPipeline(id);
      const users = config.triggers.filter((trigger) => trigger.pipelineId === pipeline.id);
      if (users.length > 0) {
        throw new ConflictError(`Pipeline ${quote(pipeline.name)} is used by the trigger${users.length === 1 ? '' : 's'} ${users.map((trigger) => quote(trigger.name)).join(', ')}: delete the trigger or point it at another pipeline first`);
      }
      return { config: { ...config, pipelines: config.pipelines.filter((candidate) => candidate.id !== pipeline.id) }, result: undefined };
    });
  }

  // ─── Runners ───

  /**
   * Validates and stores a runner (core/runners.ts validateRunner): without an id it is new and gets
   * an `rnr_` one; another id must name a stored runner. `local` is built in and refused.
   */
  saveRunner(input: unknown): Promise<Runner> {
    return this.update((config) => {
      const id = (input as { id?: unknown } | null)?.id;
      const otherNames = [localRunner, ...config.runners].filter((runner) => runner.id !== id).map((runner) => runner.name);
      const clean = validateRunner(input, { otherNames });
      if (clean.id) {
        const index = config.runners.findIndex((runner) => runner.id === clean.id);
        if (index < 0) throw new NotFoundError(`No runner with id ${quote(clean.id)}`);
        const runner: Runner = { ...clean, id: clean.id };
        return { config: { ...config, runners: config.runners.with(index, runner) }, result: runner };
      }
      const runner: Runner = { ...clean, id: newId('rnr') };
      return { config: { ...config, runners: [...config.runners, runner] }, result: runner };
    });
  }

  /** Deletes a runner; refused for `local`, and while a project, pipeline or trigger names it. */
  deleteRunner(id: unknown): Promise<void> {
    return this.update((config) => {
      if (id === localRunner.id) throw new ConflictError('The runner `local` (this computer) is built in: it cannot be deleted');
      const runner = config.runners.find((candidate) => candidate.id === id);
      if (!runner) throw new NotFoundError(`No runner with id ${quote(id)}`);
      const users = [
        ...config.projects.filter((project) => project.runnerId === runner.id).map((project) => `the project ${quote(project.name)}`),
        ...config.pipelines.filter((pipeline) => pipeline.runnerId === runner.id).map((pipeline) => `the pipeline ${quote(pipeline.name)}`),
        ...config.triggers.filter((trigger) => trigger.runnerId === runner.id).map((trigger) => `the trigger ${quote(trigger.name)}`),
      ];
      if (users.length > 0) throw new ConflictError(`Runner ${quote(runner.name)} is used by ${users.join(', ')}: choose another runner there first`);
      return { config: { ...config, runners: config.runners.filter((candidate) => candidate.id !== runner.id) }, result: undefined };
    });
  }

  exportPipeline(id: unknown): string {
    return exportPipeline(this.getPipeline(id));
  }

  /** Imports an export as a new pipeline of the first project (the user can move it afterwards). */
  async importPipeline(json: unknown): Promise<Pipeline> {
    if (typeof json !== 'string') throw new ValidationError(`importPipeline takes the exported JSON text, not ${quote(json)}`);
    const imported = parsePipelineExport(json);
    return this.update((config) => {
      const project = config.projects[0];
      if (!project) throw new ConflictError('Create a project first: an imported pipeline belongs to a project');
      const pipeline = validatePipeline({ ...imported, id: undefined, projectId: project.id }, this.context(config), this.now());
      return { config: this.putPipeline(config, pipeline), result: pipeline };
    });
  }
}

