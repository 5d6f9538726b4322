// Budgets (issue 24.1, 24.2, 24.6): what an agent may spend, the model prices that turn tokens into
// dollars where a CLI reports no cost, what each output format reports and when, the words a pause
// says, and the checks of caps at save. Pure: engine/budget.ts does the live accounting.

import type { AgentStep, Budget, BudgetStop, HarnessDefinition, ModelPrice, Pipeline, StepUsage } from './api';
import type { ValidationIssue } from './errors';
import { quote } from './errors';
import { isAbsent, isRecord, own, shown } from './validate';

// ─── Prices ───

/**
 * US dollars per million tokens, for the models the built-in harnesses default to and the common
 * ones, read from the providers' pricing pages on 2026-11-27 (docs/DECISIONS.md, Engine). A model
 * matches the longest key its name contains, so `claude-sonnet-5-5-20260601` is `sonnet` and
 * `gpt-5-mini` is not `gpt-5`. Cached input is priced as input: an estimate errs high, and Claude
 * Code's own final figure replaces it.
 */
const modelPrices: Readonly<Record<string, ModelPrice>> = Object.freeze({
  opus: { inputPerMTok: 4, outputPerMTok: 20 },
  'opus-4-1': { inputPerMTok: 15, outputPerMTok: 75 },
  sonnet: { inputPerMTok: 2, outputPerMTok: 10 },
  haiku: { inputPerMTok: 1, outputPerMTok: 5 },
  'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'gpt-5-codex': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2 },
  'gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'gemini-2.5-flash': { inputPerMTok: 0.3, outputPerMTok: 2.5 },
});

/** The model a CLI uses when the step names none, per output format (its default, for the price). */
const defaultModels: Readonly<Record<string, string>> = { 'claude-stream-json': 'sonnet', 'codex-json': 'gpt-5-codex', 'gemini-stream-json': 'gemini-2.5-pro' };

/** The longest key of `table` that `name` contains (case-insensitive), or undefined. */
function matchPrice(table: Readonly<Record<string, ModelPrice>>, name: string): ModelPrice | undefined {
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (name.includes(key.toLowerCase()) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : table[best];
}

/**
 * The price of `model` as `harness` runs it: the harness's own prices first (HarnessDefinition.prices),
 * then Factory's table; an empty model is the CLI's default. Undefined when neither knows it.
 */
export function priceOf(model: string, harness: Pick<HarnessDefinition, 'output' | 'prices'>): ModelPrice | undefined {
  const name = (model.trim() || defaultModels[harness.output] || '').toLowerCase();
  if (!name) return undefined;
  return (harness.prices && matchPrice(harness.prices, name)) ?? matchPrice(modelPrices, name);
}

// ─── What each CLI reports ───

/** When a CLI's output reports tokens and cost: as it goes, only at the end, or never. */
interface UsageReporting {
  tokens: 'live' | 'end' | 'none';
  cost: 'live' | 'end' | 'none';
}

const reportingByFormat: Readonly<Record<string, UsageReporting>> = {
  'claude-stream-json': { tokens: 'live', cost: 'end' },
  'codex-json': { tokens: 'live', cost: 'none' },
  'gemini-stream-json': { tokens: 'end', cost: 'none' },
  'opencode-json': { tokens: 'live', cost: 'live' },
};

/** What an output format reports (PROVIDERS.md §4); text, Cursor and Amp report nothing. */
function usageReporting(format: string): UsageReporting {
  return reportingByFormat[format] ?? { tokens: 'none', cost: 'none' };
}

// ─── Spend ───

/** What agent steps spent: tokens in and out, dollars (reported or estimated), milliseconds of running. */
export interface Spend {
  tokens: number;
  costUsd: number;
  ms: number;
}

export const noSpend: Readonly<Spend> = Object.freeze({ tokens: 0, costUsd: 0, ms: 0 });

export function addSpend(a: Readonly<Spend>, b: Readonly<Spend>): Spend {
  return { tokens: a.tokens + b.tokens, costUsd: a.costUsd + b.costUsd, ms: a.ms + b.ms };
}

/** Tokens in and out of one process's usage; cost as reported, else tokens × `price`, else 0. */
export function spendOfUsage(usage: StepUsage | undefined, price: ModelPrice | undefined): { tokens: number; costUsd: number } {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  const estimate = price ? (input * price.inputPerMTok + output * price.outputPerMTok) / 1_000_000 : 0;
  return { tokens: input + output, costUsd: usage?.costUsd ?? estimate };
}

/** A cap of a Budget: the limit it sets and its field. */
export type CapLimit = Exclude<BudgetStop['limit'], 'daily'>;
export const capFields: Readonly<Record<CapLimit, keyof Budget>> = { cost: 'maxCostUsd', tokens: 'maxTokens', minutes: 'maxMinutes' };

/** What `spend` counts of `limit` (minutes for minutes, dollars for cost and daily). */
export function spentOf(limit: BudgetStop['limit'], spend: Readonly<Spend>): number {
  return limit === 'tokens' ? spend.tokens : limit === 'minutes' ? spend.ms / 60_000 : spend.costUsd;
}

// ─── Words ───

export function formatUsd(amount: number): string {
  return `$${amount.toFixed(2)}`;
}

function formatTokens(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** Whose cap it is, in words. */
export type CapScope = 'step' | 'run' | 'daily';

/**
 * What a pause at a cap says: `Spent 41,200 of 40,000 tokens ($0.62), this step's cap.`;
 * `Spent $1.02 of $1.00 (41,200 tokens), this run's cap.`; `Ran 31 of 30 minutes ($0.62), …`;
 * `Spent $5.02 today of the daily limit of $5.00 (Settings).`
 */
export function describeStop(stop: BudgetStop, scope: CapScope, spend: Readonly<Spend>): string {
  const cost = spend.costUsd > 0 ? ` (${formatUsd(spend.costUsd)})` : '';
  const whose = scope === 'run' ? "this run's cap" : "this step's cap";
  switch (stop.limit) {
    case 'tokens':
      return `Spent ${formatTokens(stop.spent)} of ${formatTokens(stop.allowed)} tokens${cost}, ${whose}.`;
    case 'cost':
      return `Spent ${formatUsd(stop.spent)} of ${formatUsd(stop.allowed)}${spend.tokens > 0 ? ` (${formatTokens(spend.tokens)} tokens)` : ''}, ${whose}.`;
    case 'minutes':
      return `Ran ${Math.floor(stop.spent)} of ${stop.allowed} minutes${cost}, ${whose}.`;
    case 'daily':
      return `Spent ${formatUsd(stop.spent)} today of the daily limit of ${formatUsd(stop.allowed)} (Settings).`;
  }
}

/** A cap's amount in words: `40,000 tokens`, `$1.00`, `30 minutes`. */
export function describeAmount(limit: BudgetStop['limit'], amount: number): string {
  return limit === 'tokens' ? `${formatTokens(amount)} tokens` : limit === 'minutes' ? `${Math.round(amount * 10) / 10} minutes` : formatUsd(amount);
}

/** The prompt of a step continuing after a pause at its budget: a resumed session is told to go on; a fresh start gets the last output. */
export function budgetContinuationPrompt(prompt: string, resumed: boolean, lastOutput?: string): string {
  if (resumed) return 'You were paused at a budget limit, and a person allowed more: continue the task where you stopped.';
  const output = lastOutput?.trim();
  if (!output) return prompt;
  const cut = output.length > 4000 ? `…${output.slice(-3999)}` : output;
  return `${prompt}\n\n---\n\nAn earlier attempt at this task was paused at its budget. The last it printed:\n\n${cut}\n\nContinue from there.`;
}

// ─── Validation ───

const capRules: Readonly<Record<keyof Budget, { words: string; whole: boolean; max: number }>> = {
  maxCostUsd: { words: 'a number of dollars', whole: false, max: 1_000_000 },
  maxTokens: { words: 'a whole number of tokens', whole: true, max: 1_000_000_000_000 },
  maxMinutes: { words: 'a number of minutes', whole: false, max: 525_600 },
};

/**
 * A Budget from untrusted input at `record[key]`: each cap a number above 0 (tokens whole), at most
 * its rule's maximum; absent or null caps are left out, and a budget with none is undefined.
 * `forRun` says in the message that the cap is the whole run's.
 */
export function readBudget(record: Record<string, unknown>, key: string, field: string, issues: ValidationIssue[], forRun = false): Budget | undefined {
  const value = own(record, key);
  if (isAbsent(value)) return undefined;
  if (!isRecord(value)) {
    issues.push({ field, message: `must be an object such as { "maxTokens": 40000 }, not ${shown(value)}` });
    return undefined;
  }
  const budget: Budget = {};
  for (const name of Object.keys(capRules) as (keyof Budget)[]) {
    const cap = own(value, name);
    if (isAbsent(cap)) continue;
    const rule = capRules[name];
    if (typeof cap !== 'number' || !Number.isFinite(cap) || cap <= 0 || cap > rule.max || (rule.whole && !Number.isInteger(cap))) {
      const whose = forRun ? ' (for all agent steps of a run together)' : '';
      issues.push({ field: `${field}.${name}`, message: `must be ${rule.words} above 0 and at most ${rule.max.toLocaleString('en-US')}${whose}, or empty for no cap; not ${shown(cap)}` });
      continue;
    }
    budget[name] = cap;
  }
  return Object.keys(budget).length > 0 ? budget : undefined;
}

/** `Settings.spendLimitUsdPerDay` from untrusted input: dollars above 0; null or '' clears it (undefined); `current` when absent. */
export function readSpendLimit(value: unknown, current: number | undefined, issues: ValidationIssue[]): number | undefined {
  if (value === undefined) return current;
  if (value === null || value === '') return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1_000_000) {
    issues.push({ field: 'spendLimitUsdPerDay', message: `The daily spend limit must be a number of dollars above 0 and at most 1,000,000, or empty for none; not ${quote(value)}` });
    return current;
  }
  return value;
}

/**
 * Caps that cannot be enforced, as warnings at save: a cap on tokens or cost where the step's CLI
 * reports no tokens (`Amp reports no tokens: only `maxMinutes` can be enforced`), and a cost cap
 * where it reports no cost and Factory has no price for the model. `harnessOf` gives the harness a
 * step runs with (its own, else the pipeline's, else the default).
 */
export function budgetWarnings(pipeline: Pick<Pipeline, 'steps' | 'budget' | 'model'>, harnessOf: (step: AgentStep) => HarnessDefinition | undefined): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  pipeline.steps.forEach((step, index) => {
    if (step.kind !== 'agent') return;
    const harness = harnessOf(step);
    if (!harness) return;
    const reporting = usageReporting(harness.output);
    for (const [budget, field, whose] of [[step.budget, `steps.${step.id}.budget`, 'its budget'], [pipeline.budget, 'budget', "the run's budget"]] as const) {
      if (!budget) continue;
      const where = `Step ${index + 1} (${harness.name}), ${whose}: `;
      if (reporting.tokens === 'none' && (budget.maxTokens !== undefined || budget.maxCostUsd !== undefined)) {
        warnings.push({ field, message: `${where}${harness.name} reports no tokens: only \`maxMinutes\` can be enforced` });
      } else if (reporting.cost === 'none' && budget.maxCostUsd !== undefined) {
        const model = step.model ?? pipeline.model ?? '';
        if (!priceOf(model, harness)) warnings.push({ field, message: `${where}${harness.name} reports no cost and Factory has no price for ${model ? quote(model) : 'its default model'}: \`maxCostUsd\` cannot be enforced (add the model's price to the harness)` });
      }
    }
  });
  return warnings;
}

// ─── The ledger stored with a step ───

/**
 * What run.json keeps of an agent step's budget (StoredStepRun.budgetLedger, never sent to a
 * caller): its spend over all attempts and continuations, how often a person raised each cap at a
 * pause, which cap the current pause is at, and what a continuation starts from.
 */
export interface BudgetLedger {
  spent: Spend;
  /** Approved raises of the step's caps, of the run's caps (counted on the step that paused), and of the daily limit for this step. */
  raised?: { step?: Partial<Record<CapLimit, number>>; run?: Partial<Record<CapLimit, number>>; daily?: number };
  /** Whose cap the current pause (StepRun.budgetStop) is at. */
  pausedAt?: CapScope;
  /** Set by an approval: the next attempt resumes this session, or starts fresh with this output. */
  continueFrom?: { sessionId?: string; output?: string };
  /** The caps whose 80% notice went out (`step:tokens:0`: scope, limit, raises then). */
  warned?: string[];
}

/**
 * `HarnessDefinition.prices` from untrusted input: model names (1 to 200 characters) to dollars per
 * million tokens in and out, each from 0 to 10,000; null or absent is none (an empty object).
 */
export function readPrices(value: unknown, issues: ValidationIssue[]): Record<string, ModelPrice> {
  const prices: Record<string, ModelPrice> = {};
  if (isAbsent(value)) return prices;
  if (!isRecord(value)) {
    issues.push({ field: 'prices', message: `The prices must be an object of model names and { "inputPerMTok": 3, "outputPerMTok": 15 }, not ${shown(value)}` });
    return prices;
  }
  for (const [model, price] of Object.entries(value)) {
    const name = model.trim();
    const rate = (key: string) => (isRecord(price) ? own(price, key) : undefined);
    const fits = (figure: unknown) => typeof figure === 'number' && Number.isFinite(figure) && figure >= 0 && figure <= 10_000;
    if (!name || name.length > 200 || name === '__proto__' || name.includes('\0')) {
      issues.push({ field: 'prices', message: `The prices name a model ${quote(model)}: use its name (or part of it), up to 200 characters` });
    } else if (!fits(rate('inputPerMTok')) || !fits(rate('outputPerMTok'))) {
      issues.push({ field: `prices.${name}`, message: `The price of ${quote(name)} needs inputPerMTok and outputPerMTok, dollars per million tokens from 0 to 10,000, not ${shown(price)}` });
    } else prices[name] = { inputPerMTok: rate('inputPerMTok') as number, outputPerMTok: rate('outputPerMTok') as number };
  }
  return prices;
}
