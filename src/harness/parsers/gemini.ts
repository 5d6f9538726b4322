// Gemini CLI `-o stream-json` (PROVIDERS.md §4, output/types.ts). Events, each with a timestamp:
// `init`, `message` {role, content, delta?}, `tool_use`, `tool_result`, `error`, `result` {status,
// error?, stats}, and in newer builds `retry` and `loop_detected`.
// Output: every assistant message's content concatenated; `delta: true` chunks continue the text as
// they are, a whole message (no delta) starts on a new line. The log shows delta text line by line:
// a partial last line waits for its line feed or the next other event (a stream cut off before the
// `result` event loses that tail from the log, never from the output).
// Usage: `result.stats` input_tokens (older: input) and output_tokens; no cost. Error: `result.status:
// error` (its message), else the last `error` event whose severity is not a warning. Session: `init.session_id`.
import { LatestSessionId, asNumber, asObject, asString, type JsonObject } from './fields';
import { readJsonLine } from './json-lines';
import { describeValue, doneLine, errorLine, firstLine, sessionLines, textLines, toolCallLine, toolResultLine } from './readable';
import type { OutputParser, ParsedLine, ParseResult } from './types';
import { UsageTotal } from './usage';

export function createGeminiParser(): OutputParser {
  let usage = new UsageTotal();
  let output = '';
  /** Delta text after the last line feed, not yet shown. */
  let partialLine = '';
  let resultError: string | undefined;
  let eventError: string | undefined;
  const session = new LatestSessionId();

  /** The waiting partial line as a log line (none when empty). */
  function takePartialLine(): ParsedLine[] {
    const text = partialLine;
    partialLine = '';
    return text.trim() === '' ? [] : [{ text, stream: 'out' }];
  }

  /** A delta chunk: appends to the output and shows the lines it completes. */
  function readDelta(content: string): ParsedLine[] {
    output += content;
    const pieces = (partialLine + content).split(/\r?\n/);
    partialLine = pieces.pop()!;
    return pieces.map((text) => ({ text, stream: 'out' as const }));
  }

  function readResult(event: JsonObject): ParsedLine[] {
    const stats = asObject(event.stats);
    usage = new UsageTotal();
    if (stats) usage.add(asNumber(stats.input_tokens) ?? asNumber(stats.input), asNumber(stats.output_tokens));
    if (event.status === 'error') {
      resultError = describeValue(event.error) || 'error';
      return [errorLine(resultError)];
    }
    return [doneLine({ toolCalls: asNumber(stats?.tool_calls), durationMs: asNumber(stats?.duration_ms) })];
  }

  /** Every event but an assistant delta: its lines, after the waiting partial line. */
  function readWholeEvent(event: JsonObject): ParsedLine[] | undefined {
    switch (event.type) {
      case 'init':
        session.see(event.session_id);
        return sessionLines(event.session_id, event.model);
      case 'message': {
        const content = asString(event.content);
        if (content === undefined) return undefined;
        if (event.role !== 'assistant') return [];
        if (output !== '' && !output.endsWith('\n')) output += '\n';
        output += content;
        return textLines(content);
      }
      case 'tool_use':
        return [toolCallLine(asString(event.tool_name) ?? 'tool', event.parameters)];
      case 'tool_result':
        return [event.status === 'error' ? toolResultLine(true, event.error ?? event.output) : toolResultLine(false)];
      case 'error': {
        const message = asString(event.message) ?? 'error';
        if (event.severity !== 'warning') eventError = message;
        return [errorLine(message, event.severity !== 'warning')];
      }
      case 'retry':
        return [{ text: firstLine(`retry ${asString(event.message) ?? ''}`), stream: 'info' }];
      case 'loop_detected':
        return [{ text: 'loop detected', stream: 'err' }];
      case 'result':
        return readResult(event);
      default:
        return undefined;
    }
  }

  function read(event: JsonObject): ParsedLine[] | undefined {
    if (event.type === 'message' && event.role === 'assistant' && event.delta === true && typeof event.content === 'string') {
      return readDelta(event.content);
    }
    const lines = readWholeEvent(event);
    return lines === undefined ? undefined : [...takePartialLine(), ...lines];
  }

  return {
    push: (line) => readJsonLine(line, read),
    finish(): ParseResult {
      const result: ParseResult = { output };
      const reported = usage.usage;
      if (reported) result.usage = reported;
      const error = resultError ?? eventError;
      if (error !== undefined) result.error = error;
      return result;
    },
    sessionId: () => session.value,
    usageSoFar: () => usage.usage,
  };
}
