// Plain text output (`--output-format text` and CLIs without structured output): every line is
// assistant text, and the output is all of it.
import type { OutputParser } from './types';

export function createTextParser(): OutputParser {
  const lines: string[] = [];
  return {
    push(line) {
      lines.push(line);
      return [{ text: line, stream: 'out' }];
    },
    finish: () => ({ output: lines.join('\n') }),
    sessionId: () => undefined,
  };
}
