// FactoryApi: the one typed interface between the engine and every door (Electron IPC, remote HTTP,
// the web bridge). Every resource shape the API carries is defined here, and nowhere else.
// This file is pure types plus one constant table; `ui/` imports its types.

// ───────────────────────────── Issues, projects, pipelines ─────────────────────────────

/** What a run works on: typed by hand, or produced by a trigger. Only `title` is required. */
export interface Issue {
  title: string;
  key?: string;
  description?: string;
  url?: string;
  labels?: string[];
  priority?: string;
  source?: string;
  /** The whole webhook body (generic webhooks), reachable as `{{issue.raw.<path>}}`. */
  raw?: Record<string, unknown>;
}

export interface Project {
  id: string;
  name: string;
  /** A folder, usually a git repository. */
  path: string;
  /** true: each run works in its own git worktree under `<data>/worktrees/<runId>`. */
  worktrees: boolean;
  /** Run in the workspace before the first step; its output goes to the setup log. */
  setupCommand?: string;
  /** Where its runs execute (a Runner's id); default `local`. */
  runnerId?: string;
}

export type StepKind = 'shell' | 'agent' | 'approval' | 'pullRequest';

export interface StepBase {
  /** `/^[a-z][a-z0-9_-]{0,39}$/`, unique in the pipeline. */
  id: string;
  name: string;
  /** Extra attempts after a failure (default 0). */
  retries?: number;
  /** Default 3600 for shell and agent steps. */
  timeoutSec?: number;
  continueOnError?: boolean;
}

export interface ShellStep extends StepBase {
  kind: 'shell';
  command: string;
  env?: Record<string, string>;
}

export interface AgentStep extends StepBase {
  kind: 'agent';
  prompt: string;
  systemPrompt?: string;
  harnessId?: string;
  model?: string;
  /** No output for this long: a log line and an inbox item (default 600). */
  stallSec?: number;
  /** What a stall does besides the notice: nothing more (default), cancel the step, or kill and retry it (an attempt). */
  onStall?: 'notify' | 'cancel' | 'retry';
  /** Caps for this step, all attempts and continuations together. */
  budget?: Budget;
}

export interface ApprovalChoices {
  mode: 'single' | 'multiple';
  /** Labels; their option ids are "1", "2", ... in this order. */
  options: string[];
}

export interface ApprovalStep extends StepBase {
  kind: 'approval';
  message: string;
  choices?: ApprovalChoices;
}

/** Pushes the run's branch and opens (or updates) a pull request from it on GitHub. */
export interface PullRequestStep extends StepBase {
  kind: 'pullRequest';
  /** A GitHub connection. */
  connectionId: string;
  /** "owner/name"; default: read from the push remote's URL. */
  repository?: string;
  /** The git remote pushed to; default "origin". */
  remote?: string;
  /** Default: the repository's default branch. */
  base?: string;
  /** Template; default "{{issue.title}}". */
  title?: string;
  /** Template; default: what the run did, the issue's link/key, the run. */
  body?: string;
  draft?: boolean;
}

/** What an agent may spend; at a cap the step pauses for a decision (`approveStep`). */
export interface Budget {
  maxCostUsd?: number;
  maxTokens?: number;
  maxMinutes?: number;
}

/** Why an agent step paused at a cap: what was spent of what was allowed, and when. */
export interface BudgetStop {
  limit: 'cost' | 'tokens' | 'minutes' | 'daily';
  spent: number;
  allowed: number;
  at: number;
}

/** How a running step is doing: output within the last minute, none for longer, none for `stallSec`, or waiting out the model's usage limit. */
export type StepLiveness = 'working' | 'quiet' | 'stalled' | 'rateLimited';

export type Step = ShellStep | AgentStep | ApprovalStep | PullRequestStep;

/** A pull request a step opened or updated. */
export interface PullRequestRef {
  number: number;
  url: string;
  repository: string;
  branch: string;
  /** Last known state (updated from pull_request events and polls). */
  state?: 'open' | 'closed' | 'merged';
}

/** A run that continues a pull request (a github-review follow-up): its workspace starts from the
 *  pull request's branch as the remote has it, and its pullRequest steps push to that branch. */
export interface RunFollowUp {
  repository: string;
  number: number;
  url: string;
  /** The pull request's head branch on the remote, e.g. factory/run_abc. */
  branch: string;
  /** Default "origin". */
  remote?: string;
  /** What started it: the review id, or the lone comment id. */
  reviewId?: number;
  commentId?: number;
}

export interface Pipeline {
  id: string;
  projectId: string;
  name: string;
  description?: string;
  /** Defaults; `startRun`'s `variables` override them. */
  variables: Record<string, string>;
  /** Defaults for agent steps. */
  harnessId?: string;
  model?: string;
  /** Per pipeline; the global cap is `Settings.maxParallelRuns`. */
  maxParallelRuns?: number;
  /** Caps for the whole run: every agent step together. */
  budget?: Budget;
  /** Where its runs execute (a Runner's id); overrides the project's. */
  runnerId?: string;
  steps: Step[];
  createdAt: number;
  updatedAt: number;
}

/** What `savePipeline` takes: an empty or missing id creates; times are set by the engine. */
export type PipelineInput = Omit<Pipeline, 'id' | 'createdAt' | 'updatedAt'> & { id?: string; createdAt?: number; updatedAt?: number };

/** A message about one field of an input, such as `steps.build.command`. */
export interface FieldMessage {
  field: string;
  message: string;
}

/** What `savePipeline` answers: the pipeline as stored, and the warnings about it (never stored). */
export type SavedPipeline = Pipeline & { warnings?: FieldMessage[] };

/** What `checkPipeline` answers: what would refuse saving, and what saving would warn about. */
export interface PipelineCheck {
  problems: FieldMessage[];
  warnings: FieldMessage[];
}

/** What `saveProject` takes: an empty or missing id creates. */
export type ProjectInput = Omit<Project, 'id'> & { id?: string };

export type PipelineTemplateId = 'demo' | 'feature' | 'bugfix' | 'review' | 'blank';
export const pipelineTemplateIds: readonly PipelineTemplateId[] = ['demo', 'feature', 'bugfix', 'review', 'blank'];

/** The export format (`exportPipeline`, `importPipeline`): no ids, no times, no secrets. */
export interface PipelineExport {
  servicePipeline: 1;
  name: string;
  description?: string;
  variables: Record<string, string>;
  harnessId?: string;
  model?: string;
  maxParallelRuns?: number;
  budget?: Budget;
  steps: Step[];
}

// ───────────────────────────── Runs and logs ─────────────────────────────

export type RunStatus = 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'rejected';
export const finishedRunStatuses: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'rejected'];
/** Runs a snapshot carries (the latest); the renderer keeps its list to as many as new ones arrive. */
export const snapshotRunCount = 300;

export type StepStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'rejected';

export interface StepUsage {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

export interface StepApproval {
  approved: boolean;
  comment?: string;
  /** Option ids ("1", "2", ...). */
  selected?: string[];
  at: number;
  /** Who decided, and where. */
  by?: ApprovalDecider;
}

/** A person who decided an approval, and the surface it came from. */
export interface ApprovalDecider {
  name: string;
  via: 'app' | 'github' | 'linear' | 'jira' | 'telegram';
}

export interface StepRun {
  id: string;
  name: string;
  kind: StepKind;
  status: StepStatus;
  /** Latest attempt, 1-based; 0 = never started. */
  attempt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  error?: string;
  approval?: StepApproval;
  usage?: StepUsage;
  /** Only in `getRun`. */
  output?: string;
  /** The rendered prompt of an agent step; only in `getRun`. */
  prompt?: string;
  /** The rendered system prompt of an agent step; only in `getRun`. */
  systemPrompt?: string;
  /** The rendered message of an approval step (what the person decides on). */
  message?: string;
  /** The pull request a pullRequest step opened or updated, recorded as soon as it is known. */
  pullRequest?: PullRequestRef;
  /** The agent session, where the CLI reports one. */
  sessionId?: string;
  /** Set while an agent step waits for a decision at a budget cap (status `waiting`). */
  budgetStop?: BudgetStop;
  /** While the step runs (or waits out the model's usage limit): how it is doing. */
  liveness?: StepLiveness;
  /** When a step that hit the model's usage limit starts again. */
  resumeAt?: number;
  /** Since when `liveness` holds: the last output (quiet, stalled), the first wait (rateLimited). */
  livenessSince?: number;
  /** A failed attempt: the line of its log most likely to say why (core/failure-cause.ts). */
  cause?: FailureCause;
}

/** Where a failed step's log most likely says why: the line's number in its attempt's log (from 1) and its text (at most 300 characters). */
export interface FailureCause {
  line: number;
  text: string;
}

export interface Run {
  id: string;
  pipelineId: string;
  pipelineName: string;
  projectId: string;
  triggerId?: string;
  issue?: Issue;
  variables: Record<string, string>;
  status: RunStatus;
  error?: string;
  workspace?: string;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  steps: StepRun[];
  /** The pipeline snapshot taken at start: only in `getRun`. */
  pipeline?: Pipeline;
  /** The Linear agent session the run reports to (runs started by an agent trigger). */
  agentSessionId?: string;
  /** The branch holding the run's work once its worktree folder was removed (retention): a retry starts from it. */
  branch?: string;
  /** The pull request this run continues (a github-review follow-up). */
  followUp?: RunFollowUp;
  /** Every step's usage added up (only figures some step reported), kept current while steps run. */
  usage?: StepUsage;
  /** The runner it ran on (a Runner's id). */
  runnerId?: string;
}

/** A branch a run's worktree was on (`factory/<run-id>`), kept because it holds work. */
export interface RunBranch {
  branch: string;
  runId: string;
  /** The run's issue title or pipeline name, while the run exists. */
  runTitle?: string;
  /** Commits on it that no other local or remote-tracking branch has (what deleting it loses). */
  ahead: number;
  lastCommitAt: number;
  /** A remote-tracking branch has its last commit. */
  pushed: boolean;
  /** Its run is not finished or still has its worktree: the branch is work in progress, not kept work, and cannot be deleted. */
  inUse: boolean;
}

export interface StartRunRequest {
  pipelineId: string;
  issue?: Issue;
  variables?: Record<string, string>;
}

export interface RunFilter {
  status?: RunStatus;
  pipelineId?: string;
  search?: string;
  limit?: number;
}

export interface LogLine {
  runId: string;
  /** '' = the run's setup log. */
  stepId: string;
  attempt: number;
  line: string;
  ts?: number;
  stream?: 'out' | 'err' | 'info';
  /** The line's number in its log, from 1 (what `LogPage.before` takes); live lines of a setup log, and skip markers, carry none. */
  n?: number;
  /** A marker line, not output: this many lines were left out here. */
  skipped?: number;
}

/**
 * Which part of a log to read. Without a page (or with an empty one) the last 1,000 lines; an
 * answer holds at most 10,000 lines and about 2 MB, and a marker line (`skipped`) first says how
 * many earlier lines (or matches) were left out. The whole log is downloadable.
 */
export interface LogPage {
  /** Only lines numbered below this: the `n` of the first line already shown. */
  before?: number;
  /** At most this many lines (1 to 10,000; default 1,000). */
  limit?: number;
  /** Only the lines holding this text, in any letter case (searched on the server). */
  search?: string;
}

// ───────────────────────────── Connections and triggers ─────────────────────────────

export type ConnectionKind = 'linear' | 'jira' | 'github';

export interface ConnectionAccount {
  id: string;
  name: string;
  email?: string;
  /** Which service answered, when it varies: `Jira Cloud`, `Jira Data Center 9.12.1`. */
  server?: string;
}

/** A stored account at a tracker or code host. The token never leaves the engine. */
export interface Connection {
  id: string;
  kind: ConnectionKind;
  name: string;
  /** API root; default the public service (Jira: the site URL, required). */
  baseUrl?: string;
  /** Jira Cloud basic auth. */
  email?: string;
  token: string;
  account?: ConnectionAccount;
  /** Linear: an app installation (actor=app) through this OAuth app; `token` is its access token. */
  oauth?: ConnectionOAuth;
}

/** An OAuth app's installation (triggers/linear-oauth.ts): every field but `clientId` is a secret or the engine's own. */
export interface ConnectionOAuth {
  clientId: string;
  clientSecret: string;
  refreshToken?: string;
  /** When the access token expires (epoch ms). */
  expiresAt?: number;
  /** When it is refreshed: 80% of its lifetime (epoch ms). */
  refreshAt?: number;
  /** Why the token can no longer be refreshed: the account needs reconnecting. */
  problem?: string;
}

/** A connection as the API shows it: the token replaced by `hasToken`, the OAuth secrets by `hasClientSecret`. */
export type ConnectionView = Omit<Connection, 'token' | 'oauth'> & {
  hasToken: boolean;
  oauth?: { clientId: string; hasClientSecret: boolean; expiresAt?: number };
  /** Why the account cannot be used now, in words (a token that could not be refreshed). */
  problem?: string;
};

/** What `saveConnection` and `testConnection` take: saving without a token keeps the stored one. */
export type ConnectionInput = Omit<Connection, 'id' | 'token' | 'account' | 'oauth'> & {
  id?: string;
  token?: string;
  /** `connectLinearAgent`: the OAuth app; without `clientSecret` the stored one is kept. */
  oauth?: { clientId: string; clientSecret?: string };
};

export type TriggerKind = 'webhook' | 'linear' | 'jira' | 'github' | 'github-review';

export interface TriggerFilter {
  team?: string;
  repo?: string;
  /** JQL for Jira. */
  query?: string;
  labels?: string[];
  states?: string[];
  assignee?: string;
}

export interface TriggerConfig {
  id: string;
  name: string;
  kind: TriggerKind;
  enabled: boolean;
  pipelineId: string;
  /** Not for 'webhook'. */
  connectionId?: string;
  /** 'webhook': prefilled with a random value; providers: optional. */
  webhookSecret?: string;
  /** Providers: default 60, minimum 15. */
  pollIntervalSec?: number;
  filter?: TriggerFilter;
  /** Providers only: what the run reports back on its issue. */
  writeBack?: WriteBack;
  variables?: Record<string, string>;
  /** 'github-review': follow-up runs per pull request (default 3). */
  maxFollowUps?: number;
  /**
   * Who may decide a waiting approval from the issue's comments: logins (GitHub), emails or user ids
   * (Linear), account ids or emails (Jira). Empty: GitHub users with write access, Linear members, Jira's
   * reporter and assignee.
   */
  approvers?: string[];
  /** What starts a command in a comment (default "/": "/approve", "/reject"). */
  commandPrefix?: string;
  /** 'linear': runs start from Linear agent sessions (delegated or mentioned issues) instead of the issue filter. */
  agent?: boolean;
  /** Where its runs execute (a Runner's id); overrides the pipeline's and the project's. */
  runnerId?: string;
}

export type TriggerInput = Omit<TriggerConfig, 'id'> & { id?: string };

/** Names of the issue states (Linear, Jira) or labels (GitHub) set when a run starts and ends. */
export interface WriteBackMarks {
  started?: string;
  succeeded?: string;
  failed?: string;
}

export interface WriteBack {
  /** One comment per run on its issue, created when it starts and edited in place after. */
  comment: boolean;
  /** Linear: workflow state names; Jira: transition names. */
  states?: WriteBackMarks;
  /** GitHub: labels added (the previous mark removed). */
  labels?: WriteBackMarks;
}

/** One thing that happened to a trigger, kept so the UI can answer "why did this not run?". */
export interface LedgerEntry {
  at: number;
  source: 'webhook' | 'poll' | 'test' | 'write-back';
  key?: string;
  /** 'started run_…', 'already processed', 'ignored: no title', 'invalid signature', 'left the filter (…)', ... */
  decision: string;
  runId?: string;
}

export interface TriggerState {
  triggerId: string;
  lastPollAt?: number;
  nextPollAt?: number;
  lastEventAt?: number;
  lastError?: string;
  processedCount: number;
  /** Polling is paused by the provider's rate limit until then. */
  rateLimitedUntil?: number;
  /** The latest 200 events, newest first. */
  ledger: LedgerEntry[];
  /**
   * Jira: the projects a webhook event's issue must be in, as the query plainly names them
   * (`project = X`, `project in (A, B)` joined by AND); absent: webhook events are not checked
   * against the query at all. The rest of the query is checked only by polls.
   */
  webhookProjects?: string[];
}

// ───────────────────────────── Harnesses ─────────────────────────────

export interface HarnessDefinition {
  id: string;
  name: string;
  builtIn: boolean;
  enabled: boolean;
  command: string;
  /** May use {{prompt}}, {{model}}, {{systemPrompt}}. */
  args: string[];
  /** 'arg': the prompt is the `{{prompt}}` element of args. */
  promptVia: 'stdin' | 'arg';
  versionArgs: string[];
  modelsArgs?: string[];
  /**
   * Arguments that resume an earlier agent session, placed before the prompt (before a final `-`
   * on stdin, before `{{prompt}}` as an argument); must use {{sessionId}}. Absent: the harness
   * cannot resume, and a follow-up starts fresh with the earlier run's summary.
   */
  resume?: string[];
  models: string[];
  /** A parser in src/harness/parsers: 'text', 'claude-stream-json', 'codex-json', ... */
  output: string;
  env?: Record<string, string>;
  /** How to install the CLI: a command to paste in a terminal (the built-in harnesses). */
  install?: string;
  /**
   * Dollars per million tokens by model name (a model matches the longest name it contains), for
   * budgets where the CLI reports no cost; before Factory's own table (core/budget.ts).
   */
  prices?: Record<string, ModelPrice>;
  /**
   * The folders and files the CLI keeps its configuration and session state in (`~/.claude`), made
   * writable inside a sandbox runner; `~/` is the home folder. Nothing else of the home folder is.
   */
  sandboxPaths?: string[];
}

/** What a model costs, in US dollars per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

export interface HarnessStatus {
  installed: boolean;
  path?: string;
  version?: string;
  error?: string;
}

export type GenerateTarget = 'prompt' | 'systemPrompt' | 'command';

export interface GenerateTextRequest {
  target: GenerateTarget;
  instructions: string;
  harnessId: string;
  model?: string;
  current?: string;
  pipeline?: PipelineInput;
  stepId?: string;
  requestId?: string;
}

export interface GeneratePipelineRequest {
  description: string;
  harnessId: string;
  model?: string;
}

// ───────────────────────────── Runners ─────────────────────────────

/**
 * Where a run's steps execute: this computer (`local`, built in), this computer inside a bubblewrap
 * sandbox (`sandbox`), or another machine through the system ssh client (`ssh`).
 */
export interface Runner {
  /** 'local' is built in and cannot be changed or deleted; the others are `rnr_` ids. */
  id: string;
  name: string;
  kind: 'local' | 'sandbox' | 'ssh';
  /** sandbox: default true (agents must reach their model); false: no network at all. */
  network?: boolean;
  /** ssh: the machine's name or address. */
  host?: string;
  /** ssh: default 22 (or the user's ssh config). */
  port?: number;
  /** ssh: default the user's ssh config. */
  user?: string;
  /** ssh: a private key file; default the user's ssh config and agent. */
  identityFile?: string;
  /** ssh: how the host's key is checked; default 'strict' (it must be known already). */
  knownHosts?: 'strict' | 'accept-new';
  /** ssh: the remote folder for workspaces (absolute); default ~/.factory/work. */
  workDir?: string;
  /** Runs on this runner at once, beside the global cap. */
  maxParallelRuns?: number;
}

/** What `testRunner` answers: whether the runner can run steps, and what it found there. */
export type RunnerTest = TestResult & {
  details?: {
    /** `git version 2.39.5` */
    git?: string;
    /** Each enabled harness's version there, or why it cannot run, by harness id. */
    harnesses?: Record<string, string>;
  };
};

// ───────────────────────────── Channels and inbox ─────────────────────────────

export type ChannelKind = 'slack' | 'discord' | 'ntfy' | 'telegram' | 'webhook' | 'desktop';
export type ChannelEvent = 'run.succeeded' | 'run.failed' | 'run.waiting' | 'trigger.error';
export const channelEvents: readonly ChannelEvent[] = ['run.succeeded', 'run.failed', 'run.waiting', 'trigger.error'];

export interface Channel {
  id: string;
  kind: ChannelKind;
  name: string;
  /** Webhook URL; ntfy: server + topic; telegram: API base (optional). */
  url?: string;
  /** ntfy token, telegram bot token: treated like secrets. */
  token?: string;
  chatId?: string;
  enabled: boolean;
  events: ChannelEvent[];
  /** Empty or missing = all pipelines. */
  pipelineIds?: string[];
  /** Telegram: approval notices carry buttons to decide them. */
  approvals?: boolean;
  /** Telegram: the user ids or @usernames allowed to press those buttons. */
  approvers?: string[];
}

/** What `saveChannel` takes: an empty or missing id creates; saving without a token keeps the stored one. */
export type ChannelInput = Omit<Channel, 'id'> & { id?: string };

/** A channel as the API shows it: the token replaced by `hasToken`. */
export type ChannelView = Omit<Channel, 'token'> & {
  hasToken: boolean;
  /** Telegram approvals: why presses of its buttons cannot be read now (a webhook set, a refused token). */
  approvalsError?: string;
};

export interface InboxItem {
  id: string;
  at: number;
  /** A channel event, a channel that could not deliver, an agent step that printed nothing for its stall time, or one that spent 80% of a cap. */
  kind: ChannelEvent | 'channel.error' | 'step.stalled' | 'step.budget' | 'step.rateLimited';
  title: string;
  body?: string;
  runId?: string;
  read: boolean;
}

// ───────────────────────────── Settings and snapshot ─────────────────────────────

export interface ServerSettings {
  enabled: boolean;
  host: string;
  port: number;
}

export interface Settings {
  /** Defaults: off, '127.0.0.1', 7717. */
  webhookServer: ServerSettings;
  /** Defaults: off, '127.0.0.1', 7718. */
  remoteAccess: ServerSettings & { allowedHosts?: string[] };
  /** Default 2. */
  maxParallelRuns: number;
  /** Days after a run finished that its worktree folder is removed (its work kept on its branch); 0 keeps them. Default 7. */
  worktreeRetentionDays: number;
  defaultHarnessId?: string;
  theme?: 'system' | 'light' | 'dark';
  /** What all runs' agents together may spend in a local calendar day; at it, agent steps pause for a decision. */
  spendLimitUsdPerDay?: number;
}

/** What `saveSettings` takes: any part of Settings; what is left out keeps its value. */
export type SettingsInput = Partial<Omit<Settings, 'webhookServer' | 'remoteAccess' | 'spendLimitUsdPerDay'>> & {
  webhookServer?: Partial<ServerSettings>;
  remoteAccess?: Partial<Settings['remoteAccess']>;
  /** null removes the limit. */
  spendLimitUsdPerDay?: number | null;
};

export interface RemoteStatus {
  enabled: boolean;
  running: boolean;
  url?: string;
  error?: string;
}

export interface Snapshot {
  settings: Settings;
  projects: Project[];
  pipelines: Pipeline[];
  accounts: ConnectionView[];
  triggers: TriggerConfig[];
  triggerStates: Record<string, TriggerState>;
  harnesses: HarnessDefinition[];
  harnessStatus: Record<string, HarnessStatus>;
  /** The built-in `local` runner first, then the user's. */
  runners: Runner[];
  channels: ChannelView[];
  /** The latest `snapshotRunCount` (300) runs, without outputs or prompts. */
  runs: Run[];
  /** The latest 100 inbox items. */
  inbox: InboxItem[];
  dataDir: string;
  version: string;
  /** The webhook server's listening base URL, or null when it does not run. */
  webhookUrl: string | null;
  /** Why the webhook server is not running although it is switched on. */
  webhookError?: string;
  remote: RemoteStatus;
  /** What agents spent today (local calendar day), in US dollars, reported or estimated: what `Settings.spendLimitUsdPerDay` is compared with. */
  spentTodayUsd?: number;
}

export interface RemotePairing {
  url: string;
  token: string;
  qrSvg: string;
}

export interface TestResult {
  ok: boolean;
  error?: string;
  /** When the input was refused: the path of each problem that names a field (`error` says them in words). */
  fields?: FieldMessage[];
}

// ───────────────────────────── Events ─────────────────────────────

/** Pushed events, by name, with their payloads. */
export interface FactoryEvents {
  run: Run;
  'run-deleted': string;
  logs: LogLine[];
  inbox: InboxItem;
  snapshot: Snapshot;
  /** Desktop only: a path to show (tray menu, notification clicks). */
  navigate: string;
}

export type FactoryEventName = keyof FactoryEvents;
export const factoryEventNames: readonly FactoryEventName[] = ['run', 'run-deleted', 'logs', 'inbox', 'snapshot', 'navigate'];

export type Unsubscribe = () => void;

// ───────────────────────────── The API ─────────────────────────────

/** Every method of the spec, in the spec's argument order. Optional arguments may be undefined. */
export interface FactoryMethods {
  // Runs
  snapshot(): Promise<Snapshot>;
  listRuns(filter?: RunFilter): Promise<Run[]>;
  getRun(id: string): Promise<Run | undefined>;
  startRun(request: StartRunRequest): Promise<Run>;
  cancelRun(id: string): Promise<void>;
  retryRun(id: string, fromStepId?: string): Promise<Run>;
  /** Resolves with what was kept of the run's work, in words, when it had a worktree. */
  deleteRun(id: string): Promise<string | undefined>;
  approveStep(runId: string, stepId: string, approved: boolean, comment?: string, selected?: string[]): Promise<void>;
  readStepLog(runId: string, stepId: string, attempt?: number, page?: LogPage): Promise<LogLine[]>;
  readRunLog(runId: string, page?: LogPage): Promise<LogLine[]>;
  // Projects and pipelines
  saveProject(project: ProjectInput): Promise<Project>;
  /** The run branches of a project's repository (`factory/run_…`). */
  listRunBranches(projectId: string): Promise<RunBranch[]>;
  /** Deletes run branches: the one named, or every one whose commits are all on other branches (`merged`). Resolves with the branches deleted. */
  deleteRunBranches(projectId: string, which: string | 'merged'): Promise<string[]>;
  deleteProject(id: string): Promise<void>;
  savePipeline(pipeline: PipelineInput): Promise<SavedPipeline>;
  /** Checks a pipeline as savePipeline would, without saving it (the editor, when a field loses focus). */
  checkPipeline(pipeline: PipelineInput): Promise<PipelineCheck>;
  createPipelineFromTemplate(templateId: PipelineTemplateId, projectId?: string): Promise<Pipeline>;
  duplicatePipeline(id: string): Promise<Pipeline>;
  deletePipeline(id: string): Promise<void>;
  exportPipeline(id: string): Promise<string>;
  importPipeline(json: string): Promise<Pipeline>;
  generatePipeline(request: GeneratePipelineRequest): Promise<Pipeline>;
  cancelPipelineGeneration(): Promise<void>;
  // Accounts and triggers
  saveConnection(connection: ConnectionInput): Promise<ConnectionView>;
  deleteConnection(id: string): Promise<void>;
  testConnection(connection: ConnectionInput): Promise<TestResult & { account?: ConnectionAccount }>;
  /** Starts installing a Linear OAuth app as an agent (actor=app): the page to send the person to; the account is saved when Linear sends them back to Factory's callback. */
  connectLinearAgent(connection: ConnectionInput): Promise<{ authorizeUrl: string }>;
  saveTrigger(trigger: TriggerInput): Promise<TriggerConfig>;
  deleteTrigger(id: string): Promise<void>;
  testTrigger(trigger: TriggerInput): Promise<TestResult & { issues: Issue[] }>;
  pollTrigger(id: string): Promise<TriggerState>;
  resetTrigger(id: string): Promise<void>;
  /** A generic webhook trigger: POSTs a sample issue to its URL on the webhook server, with its token, as a sender would; `status` is what the server answered (201: a run started). */
  sendTestEvent(id: string): Promise<TestResult & { status?: number }>;
  // Harnesses and text generation
  saveHarness(harness: HarnessDefinition): Promise<HarnessDefinition>;
  deleteHarness(id: string): Promise<void>;
  setHarnessEnabled(id: string, enabled: boolean): Promise<void>;
  detectHarnesses(): Promise<Record<string, HarnessStatus>>;
  listModels(harness: HarnessDefinition): Promise<string[]>;
  refreshModels(id: string): Promise<HarnessDefinition>;
  generateText(request: GenerateTextRequest): Promise<string>;
  cancelGenerate(requestId: string): Promise<void>;
  // Runners
  saveRunner(runner: Runner): Promise<Runner>;
  /** Fails while a project, pipeline or trigger uses it, and for `local`. */
  deleteRunner(id: string): Promise<void>;
  /** Reaches the runner and finds git and the enabled harnesses' CLIs there; never saves anything. */
  testRunner(runner: Runner): Promise<RunnerTest>;
  // Channels and inbox
  saveChannel(channel: ChannelInput): Promise<ChannelView>;
  deleteChannel(id: string): Promise<void>;
  testChannel(channel: ChannelInput): Promise<TestResult>;
  markInboxRead(ids?: string[]): Promise<void>;
  /** Removes the given items (what the person saw), or all when none are named. */
  clearInbox(ids?: string[]): Promise<void>;
  // Settings and desktop functions
  saveSettings(settings: SettingsInput): Promise<Settings>;
  pickDirectory(): Promise<string | null>;
  openExternal(url: string): Promise<void>;
  openPath(path: string): Promise<void>;
  openInEditor(path: string): Promise<void>;
  remotePairing(): Promise<RemotePairing>;
  resetRemoteToken(): Promise<void>;
}

export type MethodName = keyof FactoryMethods;

export type Platform = 'darwin' | 'linux' | 'web';

export interface FactoryApi extends FactoryMethods {
  readonly platform: Platform;
  on<E extends FactoryEventName>(event: E, callback: (payload: FactoryEvents[E]) => void): Unsubscribe;
}

/**
 * A method's answer as the desktop window receives it. Electron's IPC and context bridge keep only
 * an Error's message, so a failure travels as this plain object: `error` in words, and `fields`, the
 * path of each problem that names a field. ui/call-error.ts turns a failure back into an Error.
 */
export type MethodAnswer = { ok: true; value: unknown } | { ok: false; error: string; fields?: FieldMessage[] };

/** `window.factory` in the desktop app: each method resolves with a MethodAnswer and never rejects. */
export type DesktopBridge = { [Name in MethodName]: (...args: Parameters<FactoryMethods[Name]>) => Promise<MethodAnswer> } & Pick<FactoryApi, 'platform' | 'on'>;

/** How a door may offer a method: `params` is the number of arguments it takes at most. */
export interface MethodInfo {
  params: number;
  desktopOnly: boolean;
}

const any = (params: number): MethodInfo => ({ params, desktopOnly: false });
const desktop = (params: number): MethodInfo => ({ params, desktopOnly: true });

/**
 * The one list of methods. IPC registration, the preload, the HTTP dispatcher and the web bridge
 * are all derived from it; `satisfies` makes the compiler refuse a method missing here.
 */
export const methods = {
  snapshot: any(0),
  listRuns: any(1),
  getRun: any(1),
  startRun: any(1),
  cancelRun: any(1),
  retryRun: any(2),
  deleteRun: any(1),
  approveStep: any(5),
  readStepLog: any(4),
  readRunLog: any(2),
  saveProject: any(1),
  listRunBranches: any(1),
  deleteRunBranches: any(2),
  deleteProject: any(1),
  savePipeline: any(1),
  checkPipeline: any(1),
  createPipelineFromTemplate: any(2),
  duplicatePipeline: any(1),
  deletePipeline: any(1),
  exportPipeline: any(1),
  importPipeline: any(1),
  generatePipeline: any(1),
  cancelPipelineGeneration: any(0),
  saveConnection: any(1),
  deleteConnection: any(1),
  testConnection: any(1),
  connectLinearAgent: any(1),
  saveTrigger: any(1),
  deleteTrigger: any(1),
  testTrigger: any(1),
  pollTrigger: any(1),
  resetTrigger: any(1),
  sendTestEvent: any(1),
  saveHarness: any(1),
  deleteHarness: any(1),
  setHarnessEnabled: any(2),
  detectHarnesses: any(0),
  listModels: any(1),
  refreshModels: any(1),
  generateText: any(1),
  cancelGenerate: any(1),
  saveRunner: any(1),
  deleteRunner: any(1),
  testRunner: any(1),
  saveChannel: any(1),
  deleteChannel: any(1),
  testChannel: any(1),
  markInboxRead: any(1),
  clearInbox: any(1),
  saveSettings: any(1),
  pickDirectory: desktop(0),
  openExternal: desktop(1),
  openPath: desktop(1),
  openInEditor: desktop(1),
  remotePairing: desktop(0),
  resetRemoteToken: desktop(0),
} as const satisfies Record<MethodName, MethodInfo>;

export const methodNames = Object.keys(methods) as MethodName[];

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(methods, name);
}
