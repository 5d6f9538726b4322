// The one interface every structured-output parser implements: coding-agent CLI stdout in, readable
// log lines and a final answer out.
import type { StepUsage } from '../../core/api';

/** A readable log line: assistant text, a tool call or result, an error, or a short session note. */
export interface ParsedLine {
  text: string;
  stream: 'out' | 'err' | 'info';
  /** Set on the line of an error the CLI reported (an error event, a failed turn or result): its message. */
  error?: string;
}

/** What a finished agent process produced: its final answer, the usage it reported, and the error it reported. */
export interface ParseResult {
  output: string;
  /** Only the figures the CLI reported; absent when it reported none. */
  usage?: StepUsage;
  /** The message of an error the CLI reported itself (an error result, a failed turn, an error event). */
  error?: string;
}

export interface OutputParser {
  /** One line of the CLI's stdout (without its line feed); returns the readable log lines it stands for (maybe none). Never throws: a malformed line becomes a plain 'out' line. */
  push(line: string): ParsedLine[];
  /** After the process ended: the final answer, usage and an error the CLI reported. Calling it twice gives the same answer. */
  finish(): ParseResult;
  /** The agent session's id as the CLI last reported it so far (what a later run resumes), or undefined. */
  sessionId(): string | undefined;
  /**
   * The usage the CLI reported so far, for caps enforced while it runs (engine/budget.ts); only the
   * figures it reported. Absent on formats that report nothing before the end.
   */
  usageSoFar?(): StepUsage | undefined;
}
