// Claude Code `--output-format stream-json --verbose` (PROVIDERS.md §4), also Amp `--stream-json`,
// which follows the same shapes. Lines: `system` (init), `assistant` (text and tool_use blocks),
// `user` (tool_result blocks), `result` (final text, usage, cost, is_error).
// Output: the `result` text of a successful result line, else the last assistant message's text.
// Usage choice: inputTokens counts every prompt token the model read, so the cache-creation and
// cache-read tokens are added to `input_tokens` (Codex and Gemini report input that way too).
// Session: the `session_id` every line carries (`system` init first, `result` last).
// Live usage: each `assistant` line's `message.usage` (one API call; Claude repeats it on every line
// of the same `message.id`, so a message counts once, with its latest figures), replaced by the
// `result` line's whole-session figures and cost.
import { LatestSessionId, asArray, asNumber, asObject, asString, sumNumbers, type JsonObject } from './fields';
import { readJsonLine } from './json-lines';
import { doneLine, errorLine, sessionLines, textLines, toolCallLine, toolResultLine } from './readable';
import type { OutputParser, ParsedLine, ParseResult } from './types';
import { UsageTotal } from './usage';

/** Line types that carry nothing readable (partial-message events, rate-limit notes). */
const silentTypes = new Set(['rate_limit_event', 'stream_event']);

/** The final `result` line as Claude, Amp and Cursor write it. */
export interface FinalResult {
  lines: ParsedLine[];
  /** The `result` text of a successful result. */
  output?: string;
  error?: string;
}

/**
 * Reads a `result` line: is_error or an `error_*` subtype is an error whose message is the result
 * text, else its `errors` (Claude Code's list, e.g. `No conversation found with session ID: …`), else the subtype.
 */
export function readFinalResult(event: JsonObject, costUsd?: number): FinalResult {
  const subtype = asString(event.subtype) ?? '';
  const text = asString(event.result);
  if (event.is_error === true || subtype.startsWith('error')) {
    const errors = asArray(event.errors).filter((item): item is string => typeof item === 'string' && item.trim() !== '');
    const error = text && text.trim() !== '' ? text : errors.length > 0 ? errors.join('; ') : subtype || 'error';
    return { lines: [errorLine(error)], error };
  }
  const figures = { turns: asNumber(event.num_turns), durationMs: asNumber(event.duration_ms), costUsd };
  return { lines: [doneLine(figures)], output: text };
}

/**
 * The last assistant message's text: blocks of one message (one `message.id`, which Claude spreads
 * over several lines) are joined by line feeds; a new message with text replaces it.
 */
export class LastAssistantText {
  text = '';
  private messageId: string | undefined;

  add(messageId: string | undefined, text: string): void {
    if (messageId !== undefined && messageId === this.messageId) this.text += '\n' + text;
    else this.text = text;
    this.messageId = messageId;
  }
}

export function createClaudeParser(): OutputParser {
  const assistantText = new LastAssistantText();
  let usage = new UsageTotal();
  let final: FinalResult | undefined;
  const session = new LatestSessionId();
  /** The assistant messages before the current one, and the current one's latest usage. */
  const liveUsage = { earlier: new UsageTotal(), messageId: undefined as string | undefined, current: undefined as JsonObject | undefined };

  /** Counts one assistant line's usage: the previous message's figures are final once a new id comes. */
  function seeMessageUsage(messageId: string | undefined, reported: JsonObject | undefined): void {
    if (!reported) return;
    if (messageId === undefined || messageId !== liveUsage.messageId) addUsage(liveUsage.earlier, liveUsage.current);
    liveUsage.messageId = messageId;
    liveUsage.current = reported;
  }

  function readAssistant(event: JsonObject): ParsedLine[] | undefined {
    const message = asObject(event.message);
    if (!message) return undefined;
    const messageId = asString(message.id);
    if (!final) seeMessageUsage(messageId, asObject(message.usage));
    if (typeof message.content === 'string') {
      assistantText.add(messageId, message.content);
      return textLines(message.content);
    }
    if (!Array.isArray(message.content)) return undefined;
    const lines: ParsedLine[] = [];
    for (const block of message.content) {
      const object = asObject(block);
      if (object?.type === 'tool_use') lines.push(toolCallLine(asString(object.name) ?? 'tool', object.input));
      else if (object?.type === 'text' && typeof object.text === 'string') {
        const text = object.text;
        assistantText.add(messageId, text);
        lines.push(...textLines(text));
      }
    }
    return lines;
  }

  function readUser(event: JsonObject): ParsedLine[] | undefined {
    const message = asObject(event.message);
    if (!message) return undefined;
    // A string content is the prompt or an injected note, not a tool result.
    return asArray(message.content).flatMap((block) => {
      const object = asObject(block);
      return object?.type === 'tool_result' ? [toolResultLine(object.is_error === true, object.content)] : [];
    });
  }

  function readResult(event: JsonObject): ParsedLine[] {
    const cost = asNumber(event.total_cost_usd) ?? asNumber(event.cost_usd);
    // The result line reports the whole session, so it replaces (not adds to) an earlier one.
    usage = new UsageTotal();
    const reported = asObject(event.usage);
    if (reported) addUsage(usage, reported, cost);
    else usage.add(undefined, undefined, cost);
    final = readFinalResult(event, cost);
    return final.lines;
  }

  function read(event: JsonObject): ParsedLine[] | undefined {
    session.see(event.session_id);
    switch (event.type) {
      case 'system':
        return event.subtype === 'init' ? sessionLines(event.session_id, event.model) : [];
      case 'assistant':
        return readAssistant(event);
      case 'user':
        return readUser(event);
      case 'result':
        return readResult(event);
      default:
        return typeof event.type === 'string' && silentTypes.has(event.type) ? [] : undefined;
    }
  }

  return {
    push: (line) => readJsonLine(line, read),
    finish(): ParseResult {
      const result: ParseResult = { output: final?.output ?? assistantText.text };
      const reported = usage.usage;
      if (reported) result.usage = reported;
      if (final?.error !== undefined) result.error = final.error;
      return result;
    },
    sessionId: () => session.value,
    usageSoFar() {
      if (final) return usage.usage;
      const live = new UsageTotal();
      const earlier = liveUsage.earlier.usage;
      live.add(earlier?.inputTokens, earlier?.outputTokens);
      addUsage(live, liveUsage.current);
      return live.usage;
    },
  };
}

/** Adds a Claude `usage` object: input counts the cache-creation and cache-read tokens too. */
function addUsage(total: UsageTotal, reported: JsonObject | undefined, costUsd?: number): void {
  if (!reported) return;
  const input = sumNumbers(reported.input_tokens, reported.cache_creation_input_tokens, reported.cache_read_input_tokens);
  total.add(input, asNumber(reported.output_tokens), costUsd);
}
