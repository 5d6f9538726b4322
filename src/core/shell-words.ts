// The reader of shell code (DESIGN §4 "Shell safety"): one character at a time in a code frame
// (the command itself, `$( )`, backticks, `<( )`, an array literal), it reads words, redirections,
// here-document operators, `case` patterns and `[[ ]]`, and ends simple commands and pipelines,
// handing each to core/shell-code-places.ts and core/shell-variables.ts. Quotes and expansions
// inside words are read by core/shell-scan.ts.

import {
  enter, escape, firstFoundAt, holdsPlaceholder, identifier, isAssignment, isPrefixWord, newCode, openBacktick, openDollar, spanOf, wordEnd,
  type CodeFrame, type HeredocFrame, type PipelineStage, type PlaceholderSpan, type ScanState, type Word,
} from './shell-syntax';
import { analyzeCommand, analyzeDoubleBracket, declarationBuiltins, markReparsed, shells, staticText } from './shell-code-places';
import { endCase, endCaseItem, giveBodyToReaders, recordInput } from './shell-variables';

/** Words longer than this are never a command name, option or keyword the scanner looks for. */
const maxLiteralLength = 256;

/** A word's text with quotes and backslashes removed, or undefined when it expands anything. */
function literalOf(raw: string, hasPlaceholder: boolean): string | undefined {
  if (hasPlaceholder || raw.length > maxLiteralLength || /[$`]/.test(raw)) return undefined;
  let text = '';
  for (let index = 0; index < raw.length; index += 1) {
    const character = raw[index]!;
    if (character === "'") {
      const close = raw.indexOf("'", index + 1);
      if (close === -1) return undefined;
      text += raw.slice(index + 1, close);
      index = close;
    } else if (character === '"') {
      let close = index + 1;
      for (; close < raw.length && raw[close] !== '"'; close += 1) {
        if (raw[close] === '\\' && '"\\$`'.includes(raw[close + 1] ?? '')) close += 1;
        text += raw[close];
      }
      index = close;
    } else if (character === '\\') {
      text += raw[index + 1] ?? '';
      index += 1;
    } else {
      text += character;
    }
  }
  return text;
}


export function touchWord(scan: ScanState, frame: CodeFrame, at: number): Word {
  return (frame.word ??= { start: at, raw: '', literal: undefined, found: scan.found, from: 0, to: 0 });
}

function resetCommand(frame: CodeFrame): void {
  frame.words = [];
  frame.nameAt = undefined;
}

export function openHeredoc(scan: ScanState, heredoc: HeredocFrame, at: number): void {
  heredoc.bodyStart = at;
  scan.stack.push(heredoc);
}

/**
 * Ends a here-document body at `end`. The body is no word of its command, but it may be the
 * input of a reader of code: unquoted, the values are in that code; quoted, the code holds only
 * the references, which a shell reading it expands itself.
 */
export function closeHeredoc(scan: ScanState, heredoc: HeredocFrame, end: number): void {
  giveBodyToReaders(scan, heredoc, end);
  if (heredoc.feeds === undefined) return;
  const feeds = heredoc.feeds;
  if (heredoc.quoted && shells.has(feeds)) scan.record.nestedScripts.push({ text: scan.command.slice(heredoc.bodyStart, end), by: feeds, where: { start: heredoc.bodyStart, end } });
  for (let at = firstFoundAt(scan, heredoc.bodyStart); at < scan.found.length && scan.found[at]!.start < end; at += 1) {
    if (!heredoc.quoted) scan.found[at]!.reparsedBy ??= feeds;
    else if (shells.has(feeds)) scan.found[at]!.expandedByReader = true;
  }
}

/** Ends the word being read in `frame` at `end` and files it in the current command. */
function finishWord(scan: ScanState, frame: CodeFrame, end: number): void {
  const word = frame.word;
  if (!word) return;
  frame.word = undefined;
  word.raw = scan.command.slice(word.start, end);
  word.from = firstFoundAt(scan, word.start);
  word.to = scan.found.length;
  word.literal = literalOf(word.raw, holdsPlaceholder(scan.found, word.from, word.to));
  if (frame.pendingRedirect !== undefined) {
    word.redirect = frame.pendingRedirect;
    frame.pendingRedirect = undefined;
  }
  if (frame.casePattern) {
    // A pattern is data; `esac` where a pattern could start ends the case.
    if (word.literal === 'esac' && frame.words.length === 0) {
      endCase(scan, frame, word.start);
      frame.casePattern = false;
    } else if (/^\*\[[!^]0-9\]\*$/.test(word.raw)) {
      const open = frame.cases[frame.cases.length - 1];
      if (open) open.checksDigits = true;
    }
    return;
  }
  const atCommandStart = word.redirect === undefined && frame.nameAt === undefined;
  if (atCommandStart && word.literal === 'esac' && frame.caseDepth > 0) {
    endCase(scan, frame, word.start);
    return;
  }
  frame.words.push(word);
  if (atCommandStart && !isPrefixWord(word)) frame.nameAt = frame.words.length - 1;
  if (atCommandStart && word.literal === '[[') frame.doubleBracket = true;
  else if (frame.doubleBracket && word.literal === ']]') {
    const open = frame.words.findIndex((candidate) => candidate.literal === '[[');
    analyzeDoubleBracket(frame.words.slice(open + 1, -1), spanOf(frame.words.slice(open)), scan.record);
    frame.doubleBracket = false;
  }
  const name = frame.nameAt;
  if (name !== undefined && frame.words[name]!.literal === 'case' && frame.words.length - name === 3 && word.literal === 'in') {
    const subject = /^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$/.exec(frame.words[name + 1]!.raw)?.[1];
    resetCommand(frame);
    frame.caseDepth += 1;
    frame.cases.push({ subject, checksDigits: false, exits: false });
    frame.casePattern = true;
  }
}

/** Ends the simple command of `frame`; `pipe`: it is a stage of a pipeline that goes on. */
export function finishCommand(scan: ScanState, frame: CodeFrame, end: number, pipe = false): void {
  finishWord(scan, frame, end);
  const words = frame.words;
  const heredocs = frame.heredocs;
  resetCommand(frame);
  frame.heredocs = [];
  frame.pendingRedirect = undefined;
  frame.doubleBracket = false;
  // An array literal's words are elements, not a command.
  const facts = words.length > 0 && !frame.arrayLiteral ? analyzeCommand(words, scan.record) : undefined;
  const readsCode = facts?.readsCode;
  const inputs = words.filter((word) => word.redirect === '<<<' || word.redirect === '<');
  if (readsCode !== undefined) {
    markReparsed(words.filter((word) => word.redirect === '<<<'), readsCode);
    for (const heredoc of heredocs) heredoc.feeds = readsCode;
    for (const word of inputs) {
      const text = word.redirect === '<<<' ? staticText(word) : undefined;
      if (text !== undefined && shells.has(readsCode)) scan.record.nestedScripts.push({ text, by: readsCode, where: spanOf([word]) });
    }
  }
  recordInput(scan, frame, words, heredocs, inputs, facts?.readers ?? [], facts?.compound === true);
  if (words.length > 0 || heredocs.length > 0) frame.pipeline.push({ words, heredocs, readsCode });
  if (pipe) return;
  // What a stage prints goes into the next reader of code down the pipeline.
  const stages = frame.pipeline;
  frame.pipeline = [];
  let waiting: PipelineStage[] = [];
  for (const stage of stages) {
    if (stage.readsCode !== undefined) {
      for (const earlier of waiting) {
        markReparsed(earlier.words, stage.readsCode);
        for (const heredoc of earlier.heredocs) heredoc.feeds ??= stage.readsCode;
      }
      waiting = [];
    }
    waiting.push(stage);
  }
}

/** One character of code (the frame on top is `frame`). */
export function readCode(scan: ScanState, frame: CodeFrame, character: string): void {
  const next = scan.command[scan.index + 1];
  if (character === '\\') {
    touchWord(scan, frame, scan.index);
    escape(scan);
  } else if (character === '$') {
    touchWord(scan, frame, scan.index);
    openDollar(scan, false);
  } else if (character === '#' && frame.word === undefined) {
    const newline = scan.command.indexOf('\n', scan.index);
    scan.index = newline === -1 ? scan.command.length : newline;
  } else if (character === "'" || character === '"') {
    touchWord(scan, frame, scan.index);
    scan.stack.push(character === "'" ? { kind: 'single', danger: frame.danger } : { kind: 'double', danger: frame.danger });
    scan.index += 1;
  } else if (character === '`') {
    if (frame.closer === '`') {
      finishCommand(scan, frame, scan.index);
      scan.stack.pop();
      scan.index += 1;
    } else {
      touchWord(scan, frame, scan.index);
      openBacktick(scan);
    }
  } else if (character === '[' && frame.word !== undefined && subscriptFollows(scan, frame)) {
    scan.stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(frame.danger, 'an array subscript', frame.word.start), opens: frame.danger === undefined, subscriptOf: frame.word });
    scan.index += 1;
  } else if (character === '[' && frame.word === undefined && frame.arrayLiteral) {
    touchWord(scan, frame, scan.index);
    scan.stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(frame.danger, 'an array subscript', scan.index), opens: frame.danger === undefined });
    scan.index += 1;
  } else if (frame.doubleBracket && (character === '<' || character === '>' || character === '(' || character === ')' || character === '&' || character === '|')) {
    // Inside [[ ]] these are operators of the test, not redirections or lists.
    finishWord(scan, frame, scan.index);
    const length = (character === '&' || character === '|') && next === character ? 2 : 1;
    frame.words.push({ start: scan.index, raw: scan.command.slice(scan.index, scan.index + length), literal: scan.command.slice(scan.index, scan.index + length), found: scan.found, from: 0, to: 0 });
    scan.index += length;
  } else if ((character === '<' || character === '>') && next === '(') {
    touchWord(scan, frame, scan.index); // process substitution: a command inside a word
    scan.stack.push(newCode(')', frame.danger));
    scan.index += 2;
  } else if (character === '<' || character === '>') {
    readRedirection(scan, frame, character);
  } else if (character === '(' && next === '(' && frame.word === undefined && !frame.arrayLiteral) {
    scan.stack.push({ kind: 'arithmetic', closer: ')', depth: 0, danger: enter(frame.danger, '(( ))', scan.index), opens: frame.danger === undefined });
    scan.index += 2;
  } else if (character === '(') {
    const word = frame.word;
    if (word !== undefined && scan.command[scan.index - 1] === '=' && isAssignment(scan.command.slice(word.start, scan.index), word.subscriptEnd === undefined ? undefined : word.subscriptEnd - word.start)) {
      scan.stack.push(newCode(')', frame.danger, true));
    } else if (!frame.casePattern) {
      finishCommand(scan, frame, scan.index);
      frame.depth += 1;
    }
    scan.index += 1;
  } else if (character === ')') {
    if (frame.casePattern) {
      finishWord(scan, frame, scan.index);
      frame.casePattern = false;
      resetCommand(frame);
    } else if (frame.depth > 0) {
      finishCommand(scan, frame, scan.index);
      frame.depth -= 1;
    } else if (frame.closer === ')') {
      finishCommand(scan, frame, scan.index);
      scan.stack.pop();
    }
    scan.index += 1;
  } else if (character === '|') {
    if (frame.casePattern) finishWord(scan, frame, scan.index);
    else if (next === '|') finishCommand(scan, frame, scan.index);
    else finishCommand(scan, frame, scan.index, true);
    scan.index += next === '|' || next === '&' ? 2 : 1;
  } else if (character === '&') {
    if (next === '>') {
      finishWord(scan, frame, scan.index);
      scan.index += 1;
      readRedirection(scan, frame, '>');
    } else {
      finishCommand(scan, frame, scan.index);
      scan.index += next === '&' ? 2 : 1;
    }
  } else if (character === ';') {
    finishCommand(scan, frame, scan.index);
    // `;;`, `;&` and `;;&` end a case item: a pattern follows.
    if (frame.caseDepth > 0 && (next === ';' || next === '&')) {
      endCaseItem(scan, frame, scan.index);
      frame.casePattern = true;
      scan.index += next === ';' && scan.command[scan.index + 2] === '&' ? 3 : 2;
    } else {
      scan.index += 1;
    }
  } else if (character === '\n') {
    if (!frame.doubleBracket) finishCommand(scan, frame, scan.index);
    else finishWord(scan, frame, scan.index);
    scan.index += 1;
    const heredoc = scan.pendingHeredocs.shift();
    if (heredoc) openHeredoc(scan, heredoc, scan.index);
  } else if (character === ' ' || character === '\t') {
    finishWord(scan, frame, scan.index);
    scan.index += 1;
  } else {
    touchWord(scan, frame, scan.index);
    scan.index += 1;
  }
}

/** `name[` at the start of an assignment (before the command, or after declare and the like). */
function subscriptFollows(scan: ScanState, frame: CodeFrame): boolean {
  const name = scan.command.slice(frame.word!.start, scan.index);
  if (!identifier.test(name)) return false;
  const at = frame.nameAt;
  return at === undefined || declarationBuiltins.has(frame.words[at]!.literal ?? '');
}

/** A redirection operator at `index`; here-documents are queued, other targets marked. */
function readRedirection(scan: ScanState, frame: CodeFrame, character: string): void {
  // Digits right before the operator name a file descriptor (`2>`), not an argument.
  if (frame.word !== undefined && /^\d+$/.test(scan.command.slice(frame.word.start, scan.index))) frame.word = undefined;
  else finishWord(scan, frame, scan.index);
  if (character === '<' && scan.command.startsWith('<<<', scan.index)) {
    frame.pendingRedirect = '<<<';
    scan.index += 3;
  } else if (character === '<' && scan.command.startsWith('<<', scan.index)) {
    scan.index = readHeredocOperator(scan.command, scan.index, scan.starts, (heredoc) => {
      const full: HeredocFrame = { kind: 'heredoc', ...heredoc, danger: frame.danger, bodyStart: 0, readers: [], toLoop: false };
      scan.pendingHeredocs.push(full);
      frame.heredocs.push(full);
    });
  } else {
    const operator = /^(<>|<&|>>|>&|>\||<|>)/.exec(scan.command.slice(scan.index, scan.index + 2))![0];
    frame.pendingRedirect = operator;
    scan.index += operator.length;
  }
}

/**
 * Reads `<<[-]word` starting at `index` and hands over its here-document (the body starts after
 * the next unquoted newline). Any quoting in the word makes the body literal. Returns the index
 * after the word. A word that is empty or starts with a placeholder gives no here-document.
 */
function readHeredocOperator(
  command: string, index: number, starts: ReadonlyMap<number, PlaceholderSpan>,
  queue: (heredoc: { delimiter: string; stripTabs: boolean; quoted: boolean }) => void,
): number {
  let cursor = index + 2;
  const stripTabs = command[cursor] === '-';
  if (stripTabs) cursor += 1;
  while (command[cursor] === ' ' || command[cursor] === '\t') cursor += 1;
  let delimiter = '';
  let quoted = false;
  while (cursor < command.length && !wordEnd.has(command[cursor]!) && !starts.has(cursor)) {
    const character = command[cursor]!;
    if (character === "'" || character === '"') {
      quoted = true;
      const close = command.indexOf(character, cursor + 1);
      const end = close === -1 ? command.length : close;
      delimiter += command.slice(cursor + 1, end);
      cursor = end + 1;
    } else if (character === '\\') {
      quoted = true;
      delimiter += command[cursor + 1] ?? '';
      cursor += 2;
    } else {
      delimiter += character;
      cursor += 1;
    }
  }
  if (delimiter !== '') queue({ delimiter, stripTabs, quoted });
  return cursor;
}
