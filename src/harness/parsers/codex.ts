// OpenAI Codex `codex exec --json` (PROVIDERS.md §4, exec_events.rs). Events: `thread.started`,
// `turn.started`, `item.started|updated|completed` (agent_message, reasoning, command_execution,
// file_change, mcp_tool_call, web_search, todo_list, error), `turn.completed` (usage),
// `turn.failed`, `error`.
// Output: the text of the last agent_message. Usage: `turn.completed.usage` summed over turns
// (`input_tokens` already includes `cached_input_tokens`); no cost is reported.
// Error: a `turn.failed` message; else the last `error` event not followed by a completed turn
// (Codex also reports retried stream errors that way). Session: `thread.started.thread_id` (what
// `codex exec resume <id>` takes).
import { LatestSessionId, asArray, asNumber, asObject, asString, type JsonObject } from './fields';
import { readJsonLine } from './json-lines';
import { describeValue, errorLine, firstLine, textLines, toolCallLine, toolResultLine } from './readable';
import type { OutputParser, ParsedLine, ParseResult } from './types';
import { UsageTotal } from './usage';

export function createCodexParser(): OutputParser {
  const usage = new UsageTotal();
  /** Items whose call line is already shown, so a completed item shows only its result. */
  const shownCalls = new Set<string>();
  let lastMessage = '';
  let turnFailure: string | undefined;
  let pendingError: string | undefined;
  const session = new LatestSessionId();

  /** The call line of a tool-like item, once per item id; none for items that are not tool calls. */
  function callLines(item: JsonObject): ParsedLine[] {
    const id = asString(item.id);
    if (id !== undefined && shownCalls.has(id)) return [];
    let line: ParsedLine | undefined;
    switch (item.type) {
      case 'command_execution':
        line = toolCallLine('shell', { command: item.command });
        break;
      case 'mcp_tool_call':
        line = toolCallLine(`${asString(item.server) ?? 'mcp'}.${asString(item.tool) ?? 'tool'}`, item.arguments);
        break;
      case 'web_search':
        line = toolCallLine('web_search', { query: item.query });
        break;
      case 'file_change': {
        const changes = asArray(item.changes).map((change) => {
          const object = asObject(change);
          return `${asString(object?.kind) ?? 'change'} ${asString(object?.path) ?? '?'}`;
        });
        line = toolCallLine('patch', changes.join(', '));
        break;
      }
    }
    if (!line) return [];
    if (id !== undefined) shownCalls.add(id);
    return [line];
  }

  /** The result line of a finished tool-like item. */
  function resultLines(item: JsonObject): ParsedLine[] {
    switch (item.type) {
      case 'command_execution': {
        const exitCode = asNumber(item.exit_code);
        if (item.status !== 'failed' && item.status !== 'declined' && (exitCode === undefined || exitCode === 0)) return [toolResultLine(false)];
        const detail = firstLine(asString(item.aggregated_output) ?? '');
        const reason = exitCode !== undefined ? `exit ${exitCode}` : asString(item.status) ?? 'failed';
        return [toolResultLine(true, detail === '' ? reason : `${reason}: ${detail}`)];
      }
      case 'mcp_tool_call':
        return [item.status === 'failed' || item.error ? toolResultLine(true, describeValue(item.error) || 'failed') : toolResultLine(false)];
      case 'file_change':
        return [toolResultLine(item.status === 'failed', 'failed')];
      default:
        return [];
    }
  }

  function readItem(event: JsonObject): ParsedLine[] | undefined {
    const item = asObject(event.item);
    if (!item || typeof item.type !== 'string') return undefined;
    if (event.type === 'item.started') return callLines(item);
    if (event.type === 'item.updated') return [];
    switch (item.type) {
      case 'agent_message': {
        const text = asString(item.text) ?? '';
        lastMessage = text;
        return textLines(text);
      }
      case 'reasoning': {
        const text = firstLine(asString(item.text) ?? '');
        return text === '' ? [] : [{ text, stream: 'info' }];
      }
      case 'error':
        return [errorLine(asString(item.message) ?? 'error')];
      default: {
        const lines = [...callLines(item), ...resultLines(item)];
        // A completed item is never shown again: forget its id so the set stays small.
        shownCalls.delete(asString(item.id) ?? '');
        return lines;
      }
    }
  }

  function read(event: JsonObject): ParsedLine[] | undefined {
    switch (event.type) {
      case 'thread.started':
        session.see(event.thread_id);
        return asString(event.thread_id) ? [{ text: `thread ${event.thread_id}`, stream: 'info' }] : [];
      case 'turn.started':
        return [];
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        return readItem(event);
      case 'turn.completed': {
        const reported = asObject(event.usage);
        if (reported) usage.add(asNumber(reported.input_tokens), asNumber(reported.output_tokens));
        pendingError = undefined;
        return [];
      }
      case 'turn.failed': {
        turnFailure = asString(asObject(event.error)?.message) ?? 'turn failed';
        return [errorLine(turnFailure)];
      }
      case 'error': {
        pendingError = asString(event.message) ?? 'error';
        return [errorLine(pendingError)];
      }
      default:
        return undefined;
    }
  }

  return {
    push: (line) => readJsonLine(line, read),
    finish(): ParseResult {
      const result: ParseResult = { output: lastMessage };
      const reported = usage.usage;
      if (reported) result.usage = reported;
      const error = turnFailure ?? pendingError;
      if (error !== undefined) result.error = error;
      return result;
    },
    sessionId: () => session.value,
    usageSoFar: () => usage.usage,
  };
}
