// An agent process held to its budget (issue 24.1): agent-step.ts hands it each line's parse and the
// final result; it meters the usage the CLI reported so far (engine/budget.ts), and at a cap asks
// the CLI to stop (runProcess's `interrupt`: SIGINT, then SIGTERM and SIGKILL after the graces).
// The attempt then ends as a pause for a decision, its work left in the workspace.

import type { FieldMessage, HarnessDefinition, Pipeline, StepUsage } from '../core/api';
import { budgetWarnings } from '../core/budget';
import type { BudgetWatch, ProcessMeter } from '../engine/budget';
import type { StepOutcome } from '../engine/steps';
import type { OutputParser, ParsedLine } from './parsers';

export class AgentBudget {
  private readonly controller = new AbortController();
  private readonly meter: ProcessMeter | undefined;
  private lastReadable: string | undefined;

  constructor(watch: BudgetWatch | undefined, definition: HarnessDefinition, model: string) {
    this.meter = watch?.meter(definition, model, () => this.controller.abort());
  }

  /** Aborted when a cap is reached: the process is asked to stop. */
  get interrupt(): AbortSignal {
    return this.controller.signal;
  }

  /** After each stdout line: the readable lines it gave (the last one is what the agent was doing) and the usage so far. */
  see(parser: OutputParser, lines: readonly ParsedLine[]): void {
    for (const line of lines) if (line.stream !== 'info' && line.text.trim()) this.lastReadable = line.text;
    this.meter?.see(parser.usageSoFar?.());
  }

  /** The attempt's outcome: a pause when a cap stopped the CLI (unless the run was cancelled meanwhile), else `outcome`. */
  settle(outcome: StepOutcome, finalUsage: StepUsage | undefined, cancelled: boolean): StepOutcome {
    const pause = this.meter?.end(finalUsage, this.lastReadable);
    if (!pause || cancelled) return outcome;
    const { output, usage } = outcome as { output?: string; usage?: StepUsage };
    return { status: 'waiting', ...pause, ...(output !== undefined ? { output } : {}), ...(usage ? { usage } : {}) };
  }
}

/**
 * The warnings at save about caps a pipeline sets that its steps' CLIs cannot be held to
 * (core/budget.ts), each step with the harness it would run: its own, else the pipeline's, else the default.
 */
export function pipelineBudgetWarnings(pipeline: Pipeline, harnesses: readonly HarnessDefinition[], defaultHarnessId: string | undefined): FieldMessage[] {
  return budgetWarnings(pipeline, (step) => harnesses.find((harness) => harness.id === (step.harnessId ?? pipeline.harnessId ?? defaultHarnessId ?? 'claude')));
}
