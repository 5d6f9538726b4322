// opencode `run --format json` (PROVIDERS.md §4). NDJSON lines `{type, timestamp, sessionID, part}` with
// types `step_start`, `text` (part.text), `tool_use` (part.tool, part.state{status, input, output,
// error}), `step_finish` (part.cost, part.tokens), `reasoning`, and `error` {error:{name, data:{message}}}.
// Output: the text parts of the last step that had text, joined by line feeds (all text when no step
// was marked). Usage summed over steps: input counts cache reads and writes too (as for Claude),
// output counts reasoning tokens (billed as output); cost summed. Session: the `sessionID` of every line.
import { LatestSessionId, asNumber, asObject, asString, sumNumbers, type JsonObject } from './fields';
import { readJsonLine } from './json-lines';
import { describeValue, errorLine, firstLine, textLines, toolCallLine, toolResultLine } from './readable';
import type { OutputParser, ParsedLine, ParseResult } from './types';
import { UsageTotal } from './usage';

export function createOpencodeParser(): OutputParser {
  const usage = new UsageTotal();
  let stepTexts: string[] = [];
  let lastTexts: string[] = [];
  let error: string | undefined;
  const session = new LatestSessionId();

  function readToolUse(part: JsonObject): ParsedLine[] {
    const state = asObject(part.state);
    const lines = [toolCallLine(asString(part.tool) ?? 'tool', state?.input)];
    if (state?.status === 'completed') lines.push(toolResultLine(false));
    else if (state?.status === 'error') lines.push(toolResultLine(true, state.error ?? state.output));
    return lines;
  }

  function readStepFinish(part: JsonObject): ParsedLine[] {
    const tokens = asObject(part.tokens);
    const cache = asObject(tokens?.cache);
    usage.add(sumNumbers(tokens?.input, cache?.read, cache?.write), sumNumbers(tokens?.output, tokens?.reasoning), asNumber(part.cost));
    return [];
  }

  function read(event: JsonObject): ParsedLine[] | undefined {
    session.see(event.sessionID);
    if (event.type === 'error') {
      const object = asObject(event.error);
      error = asString(asObject(object?.data)?.message) ?? asString(object?.name) ?? (describeValue(event.error) || 'error');
      return [errorLine(error)];
    }
    const part = asObject(event.part);
    if (!part) return undefined;
    switch (event.type) {
      case 'step_start':
        stepTexts = [];
        return [];
      case 'text': {
        const text = asString(part.text);
        if (text === undefined) return undefined;
        stepTexts.push(text);
        lastTexts = stepTexts;
        return textLines(text);
      }
      case 'tool_use':
        return readToolUse(part);
      case 'reasoning': {
        const text = firstLine(asString(part.text) ?? '');
        return text === '' ? [] : [{ text, stream: 'info' }];
      }
      case 'step_finish':
        return readStepFinish(part);
      default:
        return undefined;
    }
  }

  return {
    push: (line) => readJsonLine(line, read),
    finish(): ParseResult {
      const result: ParseResult = { output: lastTexts.join('\n') };
      const reported = usage.usage;
      if (reported) result.usage = reported;
      if (error !== undefined) result.error = error;
      return result;
    },
    sessionId: () => session.value,
    usageSoFar: () => usage.usage,
  };
}
