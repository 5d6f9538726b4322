// createApi: the one door into the engine. Every door (IPC, remote HTTP) calls the object this
// returns; no door has business logic of its own. Arguments arrive untrusted from any door, so
// each method checks them (or hands them to a service that does) before anything changes.

import type {
  ApprovalDecider, FactoryApi, FactoryEventName, FactoryEvents, FactoryMethods, Platform, RemoteStatus, Settings, Snapshot,
} from './core/api';
import { methods, type MethodName } from './core/api';
import { FactoryError, UnavailableError, ValidationError, errorMessage, quote } from './core/errors';
import { allRunners } from './core/runners';
import type { ChannelService } from './channels/channels';
import type { Inbox } from './channels/inbox';
import type { ConfigService } from './engine/config';
import type { EventHub } from './engine/events';
import type { EventPacer } from './engine/pacer';
import type { RunService } from './engine/runs';
import { testRunner } from './engine/runners';
import type { Generator } from './harness/generate';
import type { HarnessService } from './harness/harnesses';
import type { ConnectionService } from './triggers/connections';
import type { LinearOAuth } from './triggers/linear-oauth';
import type { TriggerService } from './triggers/triggers';
import type { ConfigFile } from './store/data-store';

/** Who decides an approval through this door: the person at the app (desktop, browser or paired phone). */
const APP_DECIDER: ApprovalDecider = { name: 'You', via: 'app' };

/** The desktop-only functions; present only in the desktop app. */
export type DesktopFunctions = Pick<FactoryMethods, 'pickDirectory' | 'openExternal' | 'openPath' | 'openInEditor' | 'remotePairing' | 'resetRemoteToken'>;

/** What createApi is built from. Services of later features plug in here. */
export interface Services {
  config: ConfigService;
  events: EventHub;
  /** Paces `snapshot` events, with the engine's `run` and `logs`. */
  pacer: EventPacer;
  runs: RunService;
  inbox: Inbox;
  triggers: TriggerService;
  connections: ConnectionService;
  /** Linear app installations (absent: connectLinearAgent is unavailable). */
  linearOAuth?: Pick<LinearOAuth, 'connect'>;
  harnesses: HarnessService;
  generator: Generator;
  channels: ChannelService;
  dataDir: string;
  version: string;
  platform: Platform;
  desktop?: DesktopFunctions;
  /** The remote access server's state (absent: remote access is not part of this build). */
  remoteStatus?: () => RemoteStatus;
  /** The webhook server's listening base URL, and why it is not running when it should. */
  webhookStatus?: () => { url: string | null; error?: string };
  /** Applies new settings to running servers; saveSettings resolves after it. */
  applySettings?: (previous: Settings, next: Settings) => Promise<void>;
}

/** What the composition and the doors need of the API object besides FactoryApi. */
export interface Doors {
  close(): void;
  announceSnapshot(): void;
  /** The snapshot as it is now (the event stream resyncs a client with it). */
  currentSnapshot(): Snapshot;
  /** The whole log of a step attempt ('' for setup) for a download: its file, or its lines; undefined when there is none. */
  logDownload(runId: string, stepId: string, attempt: number): Promise<{ path: string } | { lines: string[] } | undefined>;
}

export function createApi(services: Services): FactoryApi & Doors {
  const { config, events, pacer, runs, inbox, triggers, connections, harnesses, generator, channels } = services;

  function snapshot(): Snapshot {
    const current = config.current;
    const webhook = services.webhookStatus?.() ?? { url: null };
    return {
      settings: current.settings,
      projects: current.projects,
      pipelines: current.pipelines,
      accounts: connections.views(),
      triggers: current.triggers,
      triggerStates: triggers.states(),
      harnesses: harnesses.list(current),
      harnessStatus: harnesses.status(),
      runners: allRunners(current.runners),
      channels: channels.views(),
      runs: runs.latestRuns(),
      inbox: inbox.latest(100),
      dataDir: services.dataDir,
      version: services.version,
      webhookUrl: webhook.url,
      ...(webhook.error ? { webhookError: webhook.error } : {}),
      remote: services.remoteStatus?.() ?? { enabled: current.settings.remoteAccess.enabled, running: false },
      spentTodayUsd: runs.spentTodayUsd(),
    };
  }

  const scheduleSnapshot = () => pacer.snapshotChanged(snapshot);
  const unsubscribeConfig = config.subscribe((_previous: ConfigFile, _next: ConfigFile) => scheduleSnapshot());
  const unsubscribeTriggers = triggers.subscribe(() => scheduleSnapshot());
  // Read marks and clearing reach every client in the next snapshot (new items have their own event).
  const unsubscribeInbox = inbox.subscribe(() => scheduleSnapshot());

  function desktopOnly<M extends keyof DesktopFunctions>(name: M): DesktopFunctions[M] {
    const implementation = services.desktop?.[name];
    if (implementation) return implementation.bind(services.desktop) as DesktopFunctions[M];
    return (async () => {
      throw new UnavailableError(`${name} is only available on the desktop`);
    }) as unknown as DesktopFunctions[M];
  }

  const api: FactoryApi & Doors = {
    platform: services.platform,
    on<E extends FactoryEventName>(event: E, callback: (payload: FactoryEvents[E]) => void) {
      return events.on(event, callback);
    },
    announceSnapshot: scheduleSnapshot,
    currentSnapshot: snapshot,
    logDownload: (runId, stepId, attempt) => runs.logDownload(runId, stepId, attempt),
    close() {
      unsubscribeConfig();
      unsubscribeTriggers();
      unsubscribeInbox();
    },

    // Runs
    snapshot: async () => snapshot(),
    listRuns: async (filter) => runs.listRuns(filter),
    getRun: (id) => runs.getRun(id),
    startRun: (request) => runs.startRun(request),
    cancelRun: (id) => runs.cancelRun(id),
    retryRun: (id, fromStepId) => runs.retryRun(id, fromStepId),
    deleteRun: (id) => runs.deleteRun(id),
    async approveStep(runId, stepId, approved, comment, selected) {
      // The approval items shown until now are decided with it: read for every client. Taken before
      // deciding, so the item of a later approval of the same run stays unread.
      const decided = inbox.unreadApprovals(runId);
      await runs.approveStep(runId, stepId, approved, comment, selected, APP_DECIDER);
      await inbox.markRead(decided);
    },
    readStepLog: (runId, stepId, attempt, page) => runs.readStepLog(runId, stepId, attempt, page),
    readRunLog: (runId, page) => runs.readRunLog(runId, page),

    // Projects and pipelines
    saveProject: (project) => config.saveProject(project),
    listRunBranches: (projectId) => runs.listRunBranches(projectId),
    deleteRunBranches: (projectId, which) => runs.deleteRunBranches(projectId, which),
    deleteProject: (id) => config.deleteProject(id),
    savePipeline: (pipeline) => config.savePipeline(pipeline),
    checkPipeline: async (pipeline) => config.checkPipeline(pipeline),
    createPipelineFromTemplate: (templateId, projectId) => config.createPipelineFromTemplate(templateId, projectId),
    duplicatePipeline: (id) => config.duplicatePipeline(id),
    deletePipeline: (id) => config.deletePipeline(id),
    exportPipeline: async (id) => config.exportPipeline(id),
    importPipeline: (json) => config.importPipeline(json),
    generatePipeline: (request) => generator.generatePipeline(request),
    cancelPipelineGeneration: async () => generator.cancelPipelineGeneration(),

    // Accounts and triggers
    saveConnection: (connection) => connections.save(connection),
    deleteConnection: (id) => connections.delete(id),
    testConnection: (connection) => connections.test(connection),
    async connectLinearAgent(connection) {
      if (!services.linearOAuth) throw new UnavailableError('Linear agent accounts are not available in this build');
      return services.linearOAuth.connect(connection);
    },
    saveTrigger: (trigger) => triggers.saveTrigger(trigger),
    deleteTrigger: (id) => triggers.deleteTrigger(id),
    testTrigger: (trigger) => triggers.testTrigger(trigger),
    pollTrigger: (id) => triggers.pollTrigger(id),
    resetTrigger: (id) => triggers.resetTrigger(id),
    sendTestEvent: (id) => triggers.sendTestEvent(id, services.webhookStatus?.().url ?? null),

    // Harnesses and text generation
    saveHarness: (harness) => harnesses.saveHarness(harness),
    deleteHarness: (id) => harnesses.deleteHarness(id),
    setHarnessEnabled: (id, enabled) => harnesses.setHarnessEnabled(id, enabled),
    async detectHarnesses() {
      const status = await harnesses.detectHarnesses();
      scheduleSnapshot();
      return status;
    },
    listModels: (harness) => harnesses.listModels(harness),
    refreshModels: (id) => harnesses.refreshModels(id),
    generateText: (request) => generator.generateText(request),
    cancelGenerate: async (requestId) => generator.cancelGenerate(requestId),

    // Runners
    saveRunner: (runner) => config.saveRunner(runner),
    deleteRunner: (id) => config.deleteRunner(id),
    testRunner: (runner) => testRunner(runner, { harnesses: harnesses.list().filter((harness) => harness.enabled), otherNames: config.current.runners.filter((other) => other.id !== runner?.id).map((other) => other.name) }),

    // Channels and inbox
    saveChannel: (channel) => channels.saveChannel(channel),
    deleteChannel: (id) => channels.deleteChannel(id),
    testChannel: (channel) => channels.testChannel(channel),
    markInboxRead: (ids) => inbox.markRead(ids),
    clearInbox: (ids) => inbox.clear(ids),

    // Settings and desktop functions
    async saveSettings(input) {
      if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        throw new ValidationError(`saveSettings takes a settings object, not ${quote(input)}`);
      }
      const previous = config.settings;
      const next = await config.saveSettings(input);
      await services.applySettings?.(previous, next);
      return next;
    },
    pickDirectory: desktopOnly('pickDirectory'),
    openExternal: desktopOnly('openExternal'),
    openPath: desktopOnly('openPath'),
    openInEditor: desktopOnly('openInEditor'),
    remotePairing: desktopOnly('remotePairing'),
    resetRemoteToken: desktopOnly('resetRemoteToken'),
  };
  return api;
}

/** The webhook door's request and answer (spec C): the same types the trigger service decides on. */
export type { DeliveryAnswer, IncomingWebhook } from './triggers/triggers';
/** The Linear OAuth callback's request and answer (http/oauth-callback.ts). */
export type { CallbackHandler, CallbackResult } from './triggers/linear-oauth';

/** A method a door calls failed in a way nobody foresaw (a bug): 400 with its message, its stack only in the log. */
export class MethodFailedError extends FactoryError {
  override name = 'MethodFailedError';
}

/**
 * The one dispatcher of the doors (IPC, remote HTTP): checks the arguments (an array of at most
 * the method's count; `null` stands for an omitted one), calls the method, and throws its
 * FactoryError as it is; anything else is logged with its stack and thrown as MethodFailedError.
 */
export async function invokeMethod(api: FactoryApi, name: MethodName, args: unknown): Promise<unknown> {
  const { params } = methods[name];
  if (!Array.isArray(args)) throw new ValidationError('The arguments must be a JSON array');
  if (args.length > params) throw new ValidationError(`${name} takes at most ${params} argument${params === 1 ? '' : 's'}, not ${args.length}`);
  const method = api[name] as (...values: unknown[]) => Promise<unknown>;
  try {
    return await method.apply(api, args.map((value) => (value === null ? undefined : value)));
  } catch (error) {
    if (error instanceof FactoryError) throw error;
    console.error(`${name} failed:`, error);
    throw new MethodFailedError(`${name} failed: ${errorMessage(error)}`);
  }
}
