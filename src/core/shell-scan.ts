// Where each `{{ }}` placeholder of a shell command stands, as the shell will see it (DESIGN §4
// "Shell safety"). One pass over the command follows quotes, escapes, expansions, here-documents,
// words and simple commands, and reports per placeholder:
// - its quoting, so `renderShellCommand` can write a variable reference that expands to one word;
// - `codePlace`: a place where bash evaluates the text of an expansion as code (arithmetic,
//   array subscripts, variable names). `a[$(touch x)]` runs there, however it is quoted, so such
//   a placeholder is refused when a pipeline is saved;
// - `reparsedBy`: a command that parses the value as code once more (`bash -c`, `eval`, a pipe
//   into `sh`, …), where a placeholder is warned about.
// The same pass finds where variables are read (`$x`, `${x}`, bare names in arithmetic) and marks
// those reads like placeholders, and records what each variable is assigned, for
// core/shell-flow.ts to follow a placeholder through the variables that hold it (`scanShell`).
// The scanner reads POSIX sh plus the bash syntax that can run text (`$[ ]`, `(( ))`, `[[ ]]`,
// arrays, `<( )`). It aims to be right for ordinary scripts and cautious for odd ones: it treats
// `$((` and a `((` that starts a command as arithmetic even where bash would fall back to nested
// subshells, and it names a command only when the word is plain text.
//
// This file is the pass itself and its readers of quotes, `${…}`, arithmetic and here-document
// bodies. Code between them is read word by word in core/shell-words.ts; what a finished command
// evaluates or re-parses is core/shell-code-places.ts, what it assigns core/shell-variables.ts;
// the shared types and the cursor are core/shell-syntax.ts.

import {
  addUse, escape, identifier, isUse, nameEndAt, newCode, openBacktick, openDollar, top,
  type Frame, type ParameterFrame, type PlaceholderSpan, type Quoting, type ScanState, type ShellPlaceholder, type ShellScan,
} from './shell-syntax';
import { closeHeredoc, finishCommand, openHeredoc, readCode, touchWord } from './shell-words';

/**
 * Every placeholder of `command` (`placeholders`: their spans, in order) with its quoting, code
 * place and re-parsing, found by one scan of the command. Placeholders in comments are left out
 * (they stay text the shell ignores). Linear in the length of the command.
 */
export function scanShellCommand(command: string, placeholders: readonly PlaceholderSpan[]): ShellPlaceholder[] {
  return scanShell(command, placeholders).placeholders;
}

/**
 * The same scan, with what it saw of variables: where each is read and in which code place, what
 * each is assigned, which are integers or exported, and the literal scripts nested shells run.
 * Variable uses are marked like placeholders (`codePlace`, `reparsedBy`), so core/shell-flow.ts
 * can follow a placeholder through the variables that hold it. Linear in the length of the command.
 */
export function scanShell(command: string, placeholders: readonly PlaceholderSpan[]): ShellScan {
  const record: ShellScan = {
    placeholders: [], uses: [], assignments: [], integers: new Set(), exported: new Set(), allExported: false,
    numberChecks: [], loopInput: [], nestedScripts: [],
  };
  const scan: ScanState = {
    command, starts: new Map(placeholders.map((placeholder) => [placeholder.start, placeholder])), found: [], record,
    stack: [newCode(null, undefined)], pendingHeredocs: [], before: null, index: 0,
  };
  while (scan.index < scan.command.length) {
    const frame = top(scan);

    // A here-document body ends at a line that is exactly its delimiter.
    if (frame.kind === 'heredoc' && (scan.index === 0 || scan.command[scan.index - 1] === '\n')) {
      const newline = scan.command.indexOf('\n', scan.index);
      const lineEnd = newline === -1 ? scan.command.length : newline;
      let line = scan.command.slice(scan.index, lineEnd);
      if (frame.stripTabs) line = line.replace(/^\t+/, '');
      if (line === frame.delimiter) {
        scan.stack.pop();
        closeHeredoc(scan, frame, scan.index);
        scan.index = lineEnd + 1;
        const next = scan.pendingHeredocs.shift();
        if (next && scan.index < scan.command.length) openHeredoc(scan, next, scan.index);
        continue;
      }
    }

    const placeholder = scan.starts.get(scan.index);
    if (placeholder) {
      const shellPlaceholder: ShellPlaceholder = { ...placeholder, quoting: quotingOf(frame), before: scan.before };
      if (frame.danger !== undefined) {
        shellPlaceholder.codePlace = frame.danger.place;
        shellPlaceholder.where = frame.danger.span;
      }
      if (frame.kind === 'parameter' && frame.inName) {
        // `${!{{x}}}`: the value would name the variable to read.
        if (frame.nameLength === 1 && scan.command[frame.nameStart] === '!') {
          shellPlaceholder.codePlace = '${!x}';
          shellPlaceholder.where = frame.span;
        }
        frame.inName = false;
      }
      if (frame.kind === 'code') touchWord(scan, frame, scan.index);
      scan.found.push(shellPlaceholder);
      scan.before = null;
      scan.index = placeholder.end;
      continue;
    }
    scan.before = null;

    const character = scan.command[scan.index]!;
    switch (frame.kind) {
      case 'code':
        readCode(scan, frame, character);
        break;

      case 'single':
        if (character === "'") scan.stack.pop();
        scan.index += 1;
        break;

      case 'ansi':
        if (character === '\\') escape(scan);
        else {
          if (character === "'") scan.stack.pop();
          scan.index += 1;
        }
        break;

      case 'double':
        if (character === '\\') escape(scan);
        else if (character === '$') openDollar(scan, true);
        else if (character === '`') openBacktick(scan);
        else {
          if (character === '"') scan.stack.pop();
          scan.index += 1;
        }
        break;

      case 'heredoc':
        if (frame.quoted) scan.index += 1;
        else if (character === '\\') escape(scan);
        else if (character === '$') openDollar(scan, true);
        else if (character === '`') openBacktick(scan);
        else scan.index += 1;
        break;

      case 'parameter':
        if (frame.inName) {
          // `${name[…]…}` has a subscript; `${name:…}` (not `:-`, `:=`, `:?`, `:+`) an arithmetic offset.
          const nameCharacter = /[A-Za-z0-9_]/.test(character) || (frame.nameLength === 0 && '!#@*?$-'.includes(character));
          if (nameCharacter) {
            frame.nameLength += 1;
            scan.index += 1;
            break;
          }
          frame.inName = false;
          if (frame.nameEnd === undefined) readParameterName(scan, frame, character);
          if (character === '[') {
            scan.stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: frame.danger ?? { place: 'an array subscript', span: frame.span }, opens: false });
            frame.inName = true; // `${a[1]:2}`: an offset may follow the subscript
            scan.index += 1;
            break;
          }
          if (character === ':' && !'-=?+'.includes(scan.command[scan.index + 1] ?? '')) {
            frame.danger ??= { place: '${x:offset}', span: frame.span };
            scan.index += 1;
            break;
          }
        }
        if (character === '\\') escape(scan);
        else if (character === '$') openDollar(scan, frame.inDouble);
        else if (character === '`') openBacktick(scan);
        else if (frame.danger !== undefined && /[A-Za-z_]/.test(character) && !/[A-Za-z0-9_#]/.test(scan.command[scan.index - 1]!)) {
          // A bare name in an offset (`${s:x}`), or in a word that arithmetic reads: its value is evaluated.
          const end = nameEndAt(scan, scan.index);
          addUse(scan, scan.command.slice(scan.index, end), scan.index, end);
          scan.index = end;
        } else {
          if (character === '}') {
            if (frame.depth > 0) frame.depth -= 1;
            else closeParameter(scan, frame);
          } else if (character === '{') frame.depth += 1;
          else if (character === '"') scan.stack.push({ kind: 'double', danger: frame.danger });
          else if (character === "'" && !frame.inDouble) scan.stack.push({ kind: 'single', danger: frame.danger });
          scan.index += 1;
        }
        break;

      case 'arithmetic':
        if (character === '\\') escape(scan);
        else if (character === '$') openDollar(scan, false);
        else if (character === '`') openBacktick(scan);
        else if (character === frame.closer && frame.depth === 0) {
          scan.stack.pop();
          if (frame.subscriptOf) frame.subscriptOf.subscriptEnd = scan.index + 1;
          scan.index += frame.closer === ')' && scan.command[scan.index + 1] === ')' ? 2 : 1;
          if (frame.opens) frame.danger.span.end = scan.index;
        } else if (/[A-Za-z_]/.test(character) && !/[A-Za-z0-9_#]/.test(scan.command[scan.index - 1] ?? '')) {
          // A bare name: bash reads the variable's value and evaluates it as arithmetic in turn.
          const end = nameEndAt(scan, scan.index);
          addUse(scan, scan.command.slice(scan.index, end), scan.index, end);
          scan.index = end;
        } else {
          const opener = frame.closer === ')' ? '(' : '[';
          if (character === opener) frame.depth += 1;
          else if (character === frame.closer) frame.depth -= 1;
          else if (character === '"') scan.stack.push({ kind: 'double', danger: frame.danger });
          else if (character === "'") scan.stack.push({ kind: 'single', danger: frame.danger });
          scan.index += 1;
        }
        break;
    }
  }
  // Close what the command left open, so its last command is looked at too.
  for (let at = scan.stack.length - 1; at >= 0; at -= 1) {
    const frame = scan.stack[at]!;
    if (frame.kind === 'code') finishCommand(scan, frame, scan.command.length);
    if (frame.kind === 'heredoc') closeHeredoc(scan, frame, scan.command.length);
  }
  for (const item of scan.found) {
    if (isUse(item)) scan.record.uses.push(item);
    else scan.record.placeholders.push(item);
  }
  return scan.record;
}

/**
 * The name of `${…}` ended before `character`: a read of that variable, or with `!` of the
 * variable its value names (`${!x}`, a code place); `${#x}`, `${!x*}` and `${!x[@]}` read no value.
 */
function readParameterName(scan: ScanState, frame: ParameterFrame, character: string): void {
  frame.nameEnd = scan.index;
  const name = scan.command.slice(frame.nameStart, scan.index);
  if (identifier.test(name)) {
    frame.use = addUse(scan, name, frame.span.start, scan.index);
  } else if (name.startsWith('!') && identifier.test(name.slice(1)) && !'*@['.includes(character)) {
    scan.found.push({ name: name.slice(1), start: frame.nameStart + 1, end: scan.index, codePlace: '${!x}', where: frame.span });
  }
}

/** `}` of `${…}`: `${x//[!0-9]/}` keeps only digits of the value. */
function closeParameter(scan: ScanState, frame: ParameterFrame): void {
  scan.stack.pop();
  frame.span.end = scan.index + 1;
  if (frame.use !== undefined && /^\/\/\[[!^]0-9\]\/?$/.test(scan.command.slice(frame.nameEnd, scan.index))) frame.use.digitsOnly = true;
}

function quotingOf(frame: Frame): Quoting {
  switch (frame.kind) {
    case 'code':
    case 'arithmetic':
      return 'unquoted';
    case 'parameter':
      return frame.inDouble ? 'double' : 'unquoted';
    case 'heredoc':
      return frame.quoted ? 'quotedHeredoc' : 'heredoc';
    default:
      return frame.kind;
  }
}
