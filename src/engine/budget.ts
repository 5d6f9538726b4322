// Live budget accounting for agent steps (issue 24.1, 24.2). The run service gives each agent
// attempt a BudgetWatch; the agent runner meters each CLI process with it: tokens as the CLI
// reports them, dollars as it reports them or tokens × the model's price (core/budget.ts), corrected
// by the CLI's final figure, minutes by the clock. The spend lands on the step's ledger (run.json)
// and on the day's spend (store/spend-file.ts). At 80% of a cap: a log line and an inbox item; at a
// cap the meter calls `onStop` (the runner interrupts the CLI) and the step pauses for a decision.

import type { AgentStep, BudgetStop, HarnessDefinition, Run, StepUsage } from '../core/api';
import {
  addSpend, capFields, describeAmount, describeStop, formatUsd, noSpend, priceOf, spendOfUsage, spentOf,
  type BudgetLedger, type CapLimit, type CapScope, type Spend,
} from '../core/budget';
import type { StoredStepRun } from '../core/runs';
import { setTimer } from '../core/timers';
import type { SpendFile } from '../store/spend-file';

/** The share of a cap at which the notice goes out. */
const warnAtShare = 0.8;

interface BudgetKeeperOptions {
  spend: SpendFile;
  /** Settings.spendLimitUsdPerDay as it is now. */
  dailyLimit(): number | undefined;
  now(): number;
  /** 80% of a cap: an inbox item. */
  notice?(runId: string, stepId: string, message: string): void;
}

/** A pause at a cap: what StepRun.budgetStop and StepRun.message become. */
interface BudgetPause {
  budgetStop: BudgetStop;
  message: string;
}

/** The harness as a meter needs it: its name, output format and own prices. */
type MeteredHarness = Pick<HarnessDefinition, 'name' | 'output' | 'prices'>;

/** Meters one process of the CLI. */
export interface ProcessMeter {
  /** The usage the CLI reported so far (cumulative for this process); may call onStop. */
  see(usage: StepUsage | undefined): void;
  /** The process ended: its final usage; the pause when a cap stopped it, else undefined. */
  end(usage: StepUsage | undefined, lastLine: string | undefined): BudgetPause | undefined;
}

/** What an agent attempt gets (StepAttempt.budget). */
export interface BudgetWatch {
  /** A cap reached before anything starts (the daily limit, a run's cap spent by earlier steps); undefined: go on. */
  check(): BudgetPause | undefined;
  meter(harness: MeteredHarness, model: string, onStop: () => void): ProcessMeter;
  /** Set when a person let the step go on after a pause: resume this session, or start fresh with this output. */
  continuation?: { sessionId?: string; output?: string };
}

interface Cap {
  scope: CapScope;
  limit: BudgetStop['limit'];
  /** The cap as set (what an approval adds again). */
  base: number;
  allowed: number;
}

interface Reached {
  cap: Cap;
  spent: number;
}

/** The ledger of a step run, made when missing. */
export function ledgerOf(stepRun: StoredStepRun): BudgetLedger {
  return (stepRun.budgetLedger ??= { spent: { ...noSpend } });
}

export class BudgetKeeper {
  constructor(private readonly options: BudgetKeeperOptions) {}

  /** Dollars agents spent today (local calendar day). */
  spentToday(): number {
    return this.options.spend.spentOn(this.options.now());
  }

  flush(): Promise<void> {
    return this.options.spend.flush();
  }

  /** The watch of one attempt of agent step `stepRun` of `run` (its pipeline snapshot gives the caps); `log` writes to the attempt's log. */
  watch(run: Readonly<Run>, stepRun: StoredStepRun, log: (line: string) => void): BudgetWatch {
    const { now, spend } = this.options;
    const step = run.pipeline?.steps.find((candidate) => candidate.id === stepRun.id) as AgentStep | undefined;
    const ledger = ledgerOf(stepRun);
    const continuation = ledger.continueFrom;
    delete ledger.continueFrom;
    // Earlier steps do not spend while this one runs.
    const others = (run.steps as StoredStepRun[]).filter((other) => other !== stepRun).reduce((total, other) => addSpend(total, other.budgetLedger?.spent ?? noSpend), { ...noSpend });
    const runRaises = (limit: CapLimit) => (run.steps as StoredStepRun[]).reduce((total, other) => total + (other.budgetLedger?.raised?.run?.[limit] ?? 0), 0);
    const caps: Cap[] = [];
    for (const limit of Object.keys(capFields) as CapLimit[]) {
      const stepCap = step?.budget?.[capFields[limit]];
      if (stepCap !== undefined) caps.push({ scope: 'step', limit, base: stepCap, allowed: stepCap * (1 + (ledger.raised?.step?.[limit] ?? 0)) });
      const runCap = run.pipeline?.budget?.[capFields[limit]];
      if (runCap !== undefined) caps.push({ scope: 'run', limit, base: runCap, allowed: runCap * (1 + runRaises(limit)) });
    }
    const spentFor = (cap: Cap): number =>
      cap.scope === 'daily' ? spend.spentOn(now()) : spentOf(cap.limit, cap.scope === 'run' ? addSpend(others, ledger.spent) : ledger.spent);
    const currentCaps = (): Cap[] => {
      const daily = this.options.dailyLimit();
      return daily === undefined ? caps : [...caps, { scope: 'daily', limit: 'daily', base: daily, allowed: daily * (1 + (ledger.raised?.daily ?? 0)) }];
    };

    /** The first cap reached, after the 80% notices of the caps nearing. */
    const evaluate = (): Reached | undefined => {
      let reached: Reached | undefined;
      for (const cap of currentCaps()) {
        const spent = spentFor(cap);
        if (spent >= cap.allowed) {
          reached ??= { cap, spent };
          continue;
        }
        const key = `${cap.scope}:${cap.limit}:${cap.allowed}`;
        if (spent >= warnAtShare * cap.allowed && !ledger.warned?.includes(key)) {
          (ledger.warned ??= []).push(key);
          const message = `Budget: ${Math.floor((spent / cap.allowed) * 100)}% used: ${describeAmount(cap.limit, spent)} of ${describeAmount(cap.limit, cap.allowed)}, ${whose(cap.scope)}; at the cap the agent is stopped and the step waits for a decision`;
          log(message);
          this.options.notice?.(run.id, stepRun.id, message);
        }
      }
      return reached;
    };

    const pause = ({ cap, spent }: Reached, doing: string): BudgetPause => {
      ledger.pausedAt = cap.scope;
      const budgetStop: BudgetStop = { limit: cap.limit, spent, allowed: cap.allowed, at: now() };
      const spendShown = cap.scope === 'run' ? addSpend(others, ledger.spent) : cap.scope === 'daily' ? { ...noSpend, costUsd: spent } : ledger.spent;
      const next = cap.scope === 'daily'
        ? `Raise the limit in Settings, or approve to let this step go on (up to ${formatUsd(cap.base)} more today); reject to fail the step.`
        : `Approve to go on with ${describeAmount(cap.limit, cap.base)} more, or reject to fail the step.`;
      return { budgetStop, message: `${describeStop(budgetStop, cap.scope, spendShown)} ${doing} ${next}` };
    };

    return {
      ...(continuation ? { continuation } : {}),
      check() {
        const reached = evaluate();
        return reached ? pause(reached, 'The step did not start.') : undefined;
      },
      meter(harness, model, onStop) {
        const price = priceOf(model, harness);
        const base: Spend = { ...ledger.spent };
        const startedAt = now();
        let tokens = 0;
        let costUsd = 0;
        let reached: Reached | undefined;
        let minuteTimer: ReturnType<typeof setTimeout> | undefined;

        const update = (usage: StepUsage | undefined): void => {
          if (usage) {
            const figures = spendOfUsage(usage, price);
            // A figure the CLI stopped reporting keeps its last value.
            if (usage.inputTokens !== undefined || usage.outputTokens !== undefined) tokens = figures.tokens;
            if (usage.costUsd !== undefined || price) {
              spend.add(figures.costUsd - costUsd, now());
              costUsd = figures.costUsd;
            }
          }
          ledger.spent = { tokens: base.tokens + tokens, costUsd: base.costUsd + costUsd, ms: base.ms + (now() - startedAt) };
        };
        const check = (): void => {
          if (reached) return;
          reached = evaluate();
          if (reached) {
            clearTimeout(minuteTimer);
            onStop();
          }
        };
        // Minutes pass without output: a timer checks at the nearest minute cap.
        const minuteCaps = caps.filter((cap) => cap.limit === 'minutes');
        const scheduleMinutes = (): void => {
          if (minuteCaps.length === 0 || reached) return;
          const remainingMs = Math.min(...minuteCaps.map((cap) => cap.allowed * 60_000 - spentFor(cap) * 60_000));
          minuteTimer = setTimer(() => {
            update(undefined);
            check();
            scheduleMinutes();
          }, Math.max(remainingMs, 50));
          minuteTimer.unref?.();
        };
        scheduleMinutes();

        return {
          see(usage) {
            update(usage);
            check();
          },
          end(usage, lastLine) {
            clearTimeout(minuteTimer);
            update(usage);
            if (!reached) return undefined;
            const doing = lastLine?.trim() ? `The agent was last: “${lastLine.trim().slice(0, 200)}”.` : 'The agent printed nothing readable.';
            return pause({ cap: reached.cap, spent: spentFor(reached.cap) }, doing);
          },
        };
      },
    };
  }

  /**
   * A person let a paused step go on: the cap it paused at is raised by its amount as set (unless
   * `raise` is false: the daily limit was raised in Settings), and the next attempt continues from
   * the step's session or last output.
   */
  approve(stepRun: StoredStepRun, raise = true): void {
    const ledger = ledgerOf(stepRun);
    const stop = stepRun.budgetStop;
    if (stop && raise) {
      const raised = (ledger.raised ??= {});
      if (stop.limit === 'daily') raised.daily = (raised.daily ?? 0) + 1;
      else {
        const scope = ledger.pausedAt === 'run' ? 'run' : 'step';
        const counts = (raised[scope] ??= {});
        counts[stop.limit] = (counts[stop.limit] ?? 0) + 1;
      }
    }
    if (stepRun.sessionId || stepRun.output) ledger.continueFrom = { ...(stepRun.sessionId ? { sessionId: stepRun.sessionId } : {}), ...(stepRun.output ? { output: stepRun.output } : {}) };
    delete ledger.pausedAt;
    delete stepRun.budgetStop;
  }

  /** The error of a step whose pause a person rejected: the budget in words. */
  rejection(run: Readonly<Run>, stepRun: StoredStepRun): string {
    const stop = stepRun.budgetStop!;
    const scope = stop.limit === 'daily' ? 'daily' : ledgerOf(stepRun).pausedAt ?? 'step';
    const spend = scope === 'run' ? (run.steps as StoredStepRun[]).reduce((total, other) => addSpend(total, other.budgetLedger?.spent ?? noSpend), { ...noSpend }) : scope === 'daily' ? { ...noSpend, costUsd: stop.spent } : ledgerOf(stepRun).spent;
    return `Stopped at its budget: ${describeStop(stop, scope, spend).replace(/^./, (first) => first.toLowerCase())}`;
  }

  /** Whether a step paused at the daily limit may go on now (the limit was raised or removed, or a new day began). */
  dailyReleased(stepRun: StoredStepRun): boolean {
    if (stepRun.budgetStop?.limit !== 'daily') return false;
    const limit = this.options.dailyLimit();
    return limit === undefined || this.spentToday() < limit * (1 + (ledgerOf(stepRun).raised?.daily ?? 0));
  }
}

function whose(scope: CapScope): string {
  return scope === 'run' ? "this run's cap" : scope === 'daily' ? 'the daily limit' : "this step's cap";
}
