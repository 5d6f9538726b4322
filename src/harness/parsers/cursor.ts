// Cursor CLI `agent -p --output-format stream-json` (PROVIDERS.md §4). Lines: `system` (init), `user`,
// `assistant` (text blocks), `tool_call` started/completed (`tool_call.<kind>ToolCall: {args, result}`),
// and `result`. No usage or cost is reported. On failure there may be no result line: then no error
// is reported here and the caller uses stderr. Session: the `session_id` of init, assistant and result lines.
import { LatestSessionId, asNumber, asObject, asString, type JsonObject } from './fields';
import { LastAssistantText, readFinalResult, type FinalResult } from './claude';
import { readJsonLine } from './json-lines';
import { firstLine, sessionLines, textBlocks, textLines, toolCallLine, toolResultLine } from './readable';
import type { OutputParser, ParsedLine, ParseResult } from './types';

/** The tool's name and its call details: `shellToolCall` → `Shell`; `function` (MCP) → its own name. */
function readToolCall(toolCall: JsonObject): { name: string; input: unknown; result: unknown } | undefined {
  const kind = Object.keys(toolCall)[0];
  const details = kind === undefined ? undefined : asObject(toolCall[kind]);
  if (kind === undefined || !details) return undefined;
  if (kind === 'function') {
    const argumentsText = asString(details.arguments);
    let input: unknown = details.arguments;
    try {
      if (argumentsText !== undefined) input = JSON.parse(argumentsText);
    } catch {
      // Not JSON: summarize the text itself.
    }
    return { name: asString(details.name) ?? 'function', input, result: details.result };
  }
  const base = kind.replace(/ToolCall$/, '');
  return { name: base.charAt(0).toUpperCase() + base.slice(1), input: details.args, result: details.result };
}

/** `← ok`, or `← error: …` for an `error` or `rejected` result, or a shell command that exited non-zero. */
function resultLine(result: unknown): ParsedLine {
  const object = asObject(result);
  if (object?.error !== undefined) return toolResultLine(true, object.error);
  if (object?.rejected !== undefined) return toolResultLine(true, 'rejected');
  const success = asObject(object?.success);
  const exitCode = asNumber(success?.exitCode);
  if (exitCode !== undefined && exitCode !== 0) {
    const detail = firstLine(asString(success?.stderr) ?? '');
    return toolResultLine(true, detail === '' ? `exit ${exitCode}` : `exit ${exitCode}: ${detail}`);
  }
  return toolResultLine(false);
}

export function createCursorParser(): OutputParser {
  const assistantText = new LastAssistantText();
  let final: FinalResult | undefined;
  const session = new LatestSessionId();

  function read(event: JsonObject): ParsedLine[] | undefined {
    session.see(event.session_id);
    switch (event.type) {
      case 'system':
        return event.subtype === 'init' ? sessionLines(event.session_id, event.model) : [];
      case 'user':
        return [];
      case 'assistant': {
        const message = asObject(event.message);
        if (!message || !Array.isArray(message.content)) return undefined;
        const text = textBlocks(message.content).join('\n');
        if (text === '') return [];
        assistantText.add(undefined, text);
        return textLines(text);
      }
      case 'tool_call': {
        const call = readToolCall(asObject(event.tool_call) ?? {});
        if (!call) return undefined;
        if (event.subtype === 'started') return [toolCallLine(call.name, call.input)];
        if (event.subtype === 'completed') return [resultLine(call.result)];
        return [];
      }
      case 'result':
        final = readFinalResult(event);
        return final.lines;
      default:
        return undefined;
    }
  }

  return {
    push: (line) => readJsonLine(line, read),
    finish(): ParseResult {
      const result: ParseResult = { output: final?.output ?? assistantText.text };
      if (final?.error !== undefined) result.error = final.error;
      return result;
    },
    sessionId: () => session.value,
  };
}
