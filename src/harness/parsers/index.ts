// The registry of output parsers: one per structured-output format of a coding-agent CLI.
import { quote } from '../../core/errors';
import { createClaudeParser } from './claude';
import { createCodexParser } from './codex';
import { createCursorParser } from './cursor';
import { createGeminiParser } from './gemini';
import { createOpencodeParser } from './opencode';
import { createTextParser } from './text';
import type { OutputParser } from './types';

export type { OutputParser, ParsedLine, ParseResult } from './types';

const parserFactories: Readonly<Record<string, () => OutputParser>> = {
  text: createTextParser,
  'claude-stream-json': createClaudeParser,
  'codex-json': createCodexParser,
  'gemini-stream-json': createGeminiParser,
  'opencode-json': createOpencodeParser,
  'cursor-stream-json': createCursorParser,
  // Amp's --stream-json follows Claude Code's shapes.
  'amp-stream-json': createClaudeParser,
};

/** Every format `createParser` knows, `text` first. */
export const outputFormats: readonly string[] = Object.freeze(Object.keys(parserFactories));

export function isOutputFormat(format: string): boolean {
  return Object.hasOwn(parserFactories, format);
}

/** A fresh parser for one process's stdout. Throws RangeError for a format not in `outputFormats`. */
export function createParser(format: string): OutputParser {
  if (!isOutputFormat(format)) {
    throw new RangeError(`Unknown output format ${quote(format)}: expected one of ${outputFormats.join(', ')}`);
  }
  return parserFactories[format]!();
}
