// Composition: builds the engine and its doors for one data folder. The headless server
// (server.ts) and the desktop app (desktop/main.ts) both start Factory through here.

import { join } from 'node:path';
import type { FactoryApi, Platform } from './core/api';
import { ConflictError, errorMessage } from './core/errors';
import { createApi, type DesktopFunctions } from './api';
import { ChannelService } from './channels/channels';
import type { DesktopNotify } from './channels/senders';
import { Inbox } from './channels/inbox';
import { Notices } from './channels/notices';
import { TelegramApprovals } from './channels/telegram-approvals';
import { EventPacer } from './engine/pacer';
import { ConfigService } from './engine/config';
import { EventHub } from './engine/events';
import { RunService } from './engine/runs';
import { BudgetKeeper } from './engine/budget';
import { SpendFile } from './store/spend-file';
import { createShellRunner } from './engine/shell-step';
import type { SshSetup } from './engine/ssh';
import { runApprovalStep } from './engine/steps';
import { createPullRequestRunner } from './engine/pull-request-step';
import { githubPulls } from './triggers/github-pulls';
import { DataStore, type ConfigFile } from './store/data-store';
import { RunStore } from './store/run-store';
import { readJsonFile } from './store/json-file';
import { RemoteAuth, type RemoteState } from './http/auth';
import { RemoteAccess } from './http/remote';
import { WebhookServer } from './http/webhooks';
import { createAgentRunner } from './harness/agent-step';
import { pipelineBudgetWarnings } from './harness/agent-budget';
import { Generator } from './harness/generate';
import { HarnessService } from './harness/harnesses';
import { outputFormats } from './harness/parsers';
import { ConnectionService } from './triggers/connections';
import { LinearOAuth, oauthStateLifetimeMs } from './triggers/linear-oauth';
import { linearCallbackPath, openLoopbackCallback } from './http/oauth-callback';
import { githubProvider } from './triggers/providers/github';
import { githubReviewProvider } from './triggers/providers/github-review';
import { jiraProvider } from './triggers/providers/jira';
import { linearProvider } from './triggers/providers/linear';
import { TriggerService, type TriggerServiceOptions } from './triggers/triggers';

declare const FACTORY_VERSION: string;
/** The application version, set at build time from package.json. */
export const version = typeof FACTORY_VERSION === 'string' ? FACTORY_VERSION : '0.0.0-dev';

export interface StartOptions {
  dataDir: string;
  platform: Platform;
  /** Settings for this start only (command-line flags), applied over the saved ones. */
  overrides?: unknown;
  desktop?: DesktopFunctions;
  /** The built renderer served by remote access (dist/ui). */
  uiRoot: string;
  /** Shows a native notification (desktop channels); absent in headless mode, where they do nothing. */
  desktopNotify?: DesktopNotify;
  /** The engine's clock for runs (tests move it: worktree retention). */
  now?: () => number;
  /** Linear's OAuth authorize page (tests: the fake Linear's) and the refresh timer (tests take its callbacks). */
  linearOAuth?: { authorizeUrl?: string; now?: () => number; schedule?: (callback: () => void, delayMs: number) => () => void };
  /** Tests shorten the trigger service's waits. */
  triggerTuning?: Pick<TriggerServiceOptions, 'writeBackRetryDelaysMs' | 'firstPollDelayMs' | 'now'>;
  /** How ssh runners are reached (tests: their own known hosts and socket folder); default engine/runner.ts defaultSshSetup. */
  ssh?: () => Promise<SshSetup>;
}

export interface Factory {
  api: FactoryApi;
  dataDir: string;
  /** Remote access: its state, sign-in link and token reset. */
  remote: RemoteAccess;
  /** The run service, for starting runs as triggers do (a follow-up's internal origin); tests use it. */
  runs: RunService;
  /** Stops everything: servers closed, pending writes flushed. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Opens the data folder and starts the engine. Throws (starting nothing) when the data folder
 * cannot be used, e.g. a corrupt config.json: the error names the file and why.
 */
export async function startFactory(options: StartOptions): Promise<Factory> {
  const store = new DataStore(options.dataDir);
  await store.open();
  const config = await ConfigService.open(store, { overrides: options.overrides });
  const events = new EventHub();
  const pacer = new EventPacer(events);
  const inbox = await Inbox.open(store, (item) => events.emit('inbox', item));
  // Telegram approval buttons: telegram.json keeps each bot's update offset and the sent prompts.
  const telegramFile = join(options.dataDir, 'telegram.json');
  let announceSnapshot = () => {};
  const telegram = await TelegramApprovals.open({
    config, inbox, statusChanged: () => announceSnapshot(),
    store: { load: () => readJsonFile<unknown>(telegramFile), save: (content) => store.writer.write(telegramFile, () => JSON.stringify(content()) + '\n', { mode: 0o600 }) },
  });
  const channels = new ChannelService({ config, inbox, approvals: telegram, ...(options.desktopNotify ? { desktopNotify: options.desktopNotify } : {}) });
  const auth = await RemoteAuth.open({ load: async () => (await store.readRemote()) as RemoteState | undefined, save: (state) => store.writeRemote(state) });
  // Linear sends the person back to remote access when it runs, else (desktop) to a one-time loopback listener.
  const linearOAuth = new LinearOAuth({
    config, ...options.linearOAuth,
    openCallback: async (complete) => {
      const url = remote.status().url;
      if (url) return { redirectUri: `${url}${linearCallbackPath}` };
      if (options.desktop) return openLoopbackCallback(complete, oauthStateLifetimeMs);
      throw new ConflictError('Linear must send you back to Factory: switch on remote access in Settings first, and register its address (shown in the account editor) as the OAuth app\'s callback URL');
    },
    // Its triggers, paused by the problem, poll again now rather than after their backoff.
    reconnected: (connection) => {
      for (const trigger of config.current.triggers) {
        if (trigger.connectionId === connection.id && trigger.enabled) triggers.pollTrigger(trigger.id).catch(() => undefined);
      }
    },
  });
  // The servers exist from here on; they serve the API once it is made (below).
  const remote = new RemoteAccess({ auth, uiRoot: options.uiRoot, allowedHosts: () => config.settings.remoteAccess.allowedHosts ?? [], linearCallback: (query) => linearOAuth.complete(query) });
  const harnesses = new HarnessService(config, outputFormats);
  const findHarness = (id: string) => harnesses.list().find((harness) => harness.id === id);
  config.warnAlso((pipeline, current) => pipelineBudgetWarnings(pipeline, harnesses.list(current), current.settings.defaultHarnessId));
  const secrets = () => [auth.token, ...configSecrets(config.current)];
  // A link to a run in the remote UI, when remote access runs.
  const runUrl = (runId: string) => {
    const url = remote.status().url;
    return url ? `${url}/#/runs/${runId}` : undefined;
  };
  const notices = new Notices(inbox, channels, runUrl);
  const webhooks = new WebhookServer({ onStartFailed: (message) => notices.triggerError(`The webhook server failed to start: ${message}`) });
  // What agents may spend: caps per step and run, the day's spend against Settings.spendLimitUsdPerDay.
  const budget = new BudgetKeeper({
    spend: await SpendFile.open(join(options.dataDir, 'spend.json'), store.writer),
    dailyLimit: () => config.settings.spendLimitUsdPerDay,
    now: options.now ?? Date.now,
    notice: (runId, stepId, message) => notices.budgetNearing(runId, stepId, message),
  });
  const { service: runs, problems } = await RunService.open({
    store: new RunStore(options.dataDir, store.writer, store.appender),
    config,
    hub: events,
    pacer,
    runners: {
      shell: createShellRunner(),
      approval: runApprovalStep,
      pullRequest: createPullRequestRunner({ connection: (id) => config.current.connections.find((connection) => connection.id === id), github: githubPulls }),
      agent: createAgentRunner({
        harness: findHarness,
        resolveCommand: (definition) => harnesses.resolveCommand(definition),
        defaultHarnessId: () => config.settings.defaultHarnessId,
        stalled: (runId, stepId, message) => notices.stepStalled(runId, stepId, message),
        ...(options.now ? { now: options.now } : {}),
      }),
    },
    worktreesDir: join(options.dataDir, 'worktrees'),
    ...(options.now ? { now: options.now } : {}),
    ...(options.ssh ? { ssh: options.ssh } : {}),
    budget,
    secrets,
    runUrl,
  });
  runs.onLifecycle((event) => notices.runEvent(event));
  const generator = new Generator({
    harness: findHarness,
    resolveCommand: (definition) => harnesses.resolveCommand(definition),
    savePipeline: (json) => config.importPipeline(JSON.stringify(json)),
    secrets,
  });
  for (const problem of problems) console.warn(`Skipped a run: ${problem}`);
  const providers = { linear: linearOAuth.provider(linearProvider), github: githubProvider, jira: jiraProvider };
  const connections = new ConnectionService(config, providers);
  const triggers = await TriggerService.open({
    store, config, runs, connections, providers: { ...providers, 'github-review': githubReviewProvider(runs) }, runUrl, events,
    linearToken: (connection, call) => linearOAuth.withFreshToken(connection, call),
    failed: (trigger, message) => notices.triggerError(message, trigger.name),
    ...options.triggerTuning,
  });
  const api = createApi({
    config,
    events,
    pacer,
    runs,
    inbox,
    triggers,
    connections,
    linearOAuth,
    harnesses,
    generator,
    channels,
    dataDir: options.dataDir,
    version,
    platform: options.platform,
    desktop: options.desktop,
    remoteStatus: () => remote.status(),
    webhookStatus: () => ({ url: webhooks.url(), error: webhooks.error() }),
    applySettings: async (_previous, next) => {
      await remote.apply(next.remoteAccess);
      await webhooks.apply(next.webhookServer);
    },
  });

  remote.serve(api);
  webhooks.serve(triggers.admission);
  announceSnapshot = () => api.announceSnapshot();
  runs.start();
  telegram.start({ runs, hub: events });
  linearOAuth.start();
  await remote.apply(config.settings.remoteAccess);
  await webhooks.apply(config.settings.webhookServer);
  // Which agent CLIs are installed: found in the background, announced with a snapshot.
  harnesses.detectHarnesses().then(() => api.announceSnapshot(), (error) => console.warn(`Detecting agent CLIs failed: ${errorMessage(error)}`));

  let stopping: Promise<void> | undefined;
  return {
    api,
    dataDir: options.dataDir,
    remote,
    runs,
    stop() {
      stopping ??= (async () => {
        linearOAuth.stop();
        await remote.stop();
        await webhooks.stop();
        await triggers.stop();
        await telegram.stop();
        await runs.stop();
        api.close();
        await config.idle();
        await inbox.close();
        await store.close();
      })();
      return stopping;
    },
  };
}

/** Every secret in the configuration: kept out of step environments. */
export function configSecrets(config: Readonly<ConfigFile>): string[] {
  const secrets: (string | undefined)[] = [
    ...config.connections.flatMap((connection) => [connection.token, connection.oauth?.clientSecret, connection.oauth?.refreshToken]),
    ...config.triggers.map((trigger) => trigger.webhookSecret),
    ...config.channels.flatMap((channel) => [channel.token, channel.url && channel.kind !== 'ntfy' ? channel.url : undefined]),
  ];
  return secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
}
