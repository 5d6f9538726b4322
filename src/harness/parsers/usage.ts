// Adds up the token counts and cost a CLI reports, keeping "not reported" apart from zero.
import type { StepUsage } from '../../core/api';

export class UsageTotal {
  private inputTokens: number | undefined;
  private outputTokens: number | undefined;
  private costUsd: number | undefined;

  /** Adds one report; an undefined figure leaves that total as it was. */
  add(inputTokens: number | undefined, outputTokens: number | undefined, costUsd?: number): void {
    if (inputTokens !== undefined) this.inputTokens = (this.inputTokens ?? 0) + inputTokens;
    if (outputTokens !== undefined) this.outputTokens = (this.outputTokens ?? 0) + outputTokens;
    if (costUsd !== undefined) this.costUsd = (this.costUsd ?? 0) + costUsd;
  }

  /** Only the reported figures; undefined when nothing was reported. */
  get usage(): StepUsage | undefined {
    const usage: StepUsage = {};
    if (this.inputTokens !== undefined) usage.inputTokens = this.inputTokens;
    if (this.outputTokens !== undefined) usage.outputTokens = this.outputTokens;
    if (this.costUsd !== undefined) usage.costUsd = this.costUsd;
    return Object.keys(usage).length > 0 ? usage : undefined;
  }
}
