// The vocabulary of the shell scan (DESIGN §4 "Shell safety"): placeholders and how the shell
// quotes them, code places, variable reads and assignments, the words and frames the scanner
// (core/shell-scan.ts) keeps, and its cursor: the state of one pass and the steps that open
// expansions (`$…`, `\`, backticks), shared by the reader of code (core/shell-words.ts) and the
// readers of quotes and expansions.

export interface PlaceholderSpan {
  path: string;
  start: number;
  end: number;
}

/**
 * How the shell quotes the spot: unquoted; in double quotes (or `${x:-…}` inside them); in single
 * quotes; in `$'…'`; in an unquoted here-document body; in a quoted one (nothing expands there).
 */
export type Quoting = 'unquoted' | 'double' | 'single' | 'ansi' | 'heredoc' | 'quotedHeredoc';

/**
 * Places where bash evaluates text as code, as error messages name them: arithmetic, subscripts,
 * offsets, number comparisons, variable names (`read x`, `${!x}`), the values of `declare -i` and
 * of `declare -a`/`-A` (`(…)` in the value is an array literal with subscripts), and the prompt
 * strings PS1–PS4 and PROMPT_COMMAND (the shell expands them when it prints a prompt or a trace).
 */
export type CodePlace = '$(( ))' | '$[ ]' | '(( ))' | 'an array subscript' | '${x:offset}' | '[[ -eq ]]' | 'let' | 'a variable name'
  | '${!x}' | 'declare -i' | 'declare -a' | 'a prompt string';

/** A stretch of the command (a code place, for messages); `end` is unset while it is open. */
export interface Span {
  start: number;
  end?: number;
}

/** Marks common to placeholders and variable uses: how the shell treats the text there. */
export interface Marks {
  start: number;
  end: number;
  codePlace?: CodePlace;
  /** The code place's text in the command, for messages. */
  where?: Span;
  /** What parses the value as code again: `bash -c`, `eval`, `trap`, `sh` (reading its input), … */
  reparsedBy?: string;
  /** In a quoted here-document that a shell reads: that shell expands the variable reference. */
  expandedByReader?: boolean;
}

export interface ShellPlaceholder extends PlaceholderSpan, Marks {
  quoting: Quoting;
  /** An active `\` or `$` written right before the placeholder. */
  before: 'backslash' | 'dollar' | null;
}

/** A place where a shell variable's value is read: `$x`, `${x…}`, or a bare name in arithmetic. */
export interface VariableUse extends Marks {
  name: string;
  /** `${x//[!0-9]/}` and the like: only the value's digits come out, which run nowhere. */
  digitsOnly?: boolean;
}

/**
 * A variable given a value made of `sources` (the placeholders and variable uses in it):
 * `x=…`, `export`/`declare`/`local`/`readonly`/`typeset x=…`, `read x` (its input), `printf -v x`,
 * `mapfile x`, `for x in …`. A source in a here-document body joins when the body ends.
 */
export interface Assignment {
  name: string;
  /** Where the assigning command starts. */
  start: number;
  /** Its text, for messages. */
  where: Span;
  sources: Array<ShellPlaceholder | VariableUse>;
  /** `read`/`mapfile` in a command whose input is redirected: the input of loops is a source too. */
  readsInput: boolean;
  /** `x=${x//[!0-9]/}`: the value is only digits, so from here on `x` holds a number. */
  digitsOnly: boolean;
}

/** What the scan saw of a command's variables, for core/shell-flow.ts to follow values. */
export interface ShellScan {
  placeholders: ShellPlaceholder[];
  uses: VariableUse[];
  assignments: Assignment[];
  /** Names declared integers (`declare -i n`): every value given to them is arithmetic. */
  integers: Set<string>;
  /** Names passed to the environment of commands (`export`, `declare -x`, `x=… cmd`). */
  exported: Set<string>;
  /** `set -a`: every assigned variable is exported. */
  allExported: boolean;
  /** `case "$n" in *[!0-9]*) exit …;; esac`: where `n` is checked to hold only digits. */
  numberChecks: Array<{ name: string; at: number }>;
  /** Input redirected into a loop or group (`done <<< "…"`): what `read` in it may read. */
  loopInput: Array<ShellPlaceholder | VariableUse>;
  /** Literal scripts that a nested shell runs: `bash -c '…'`, a quoted here-document into `sh`. */
  nestedScripts: Array<{ text: string; by: string; where: Span }>;
}

export type Item = ShellPlaceholder | VariableUse;

export function isUse(item: Item): item is VariableUse {
  return 'name' in item;
}

export interface Word {
  start: number;
  /** The word as written (set when it ends). */
  raw: string;
  /** The word's text after quote removal, when it holds no expansion and no placeholder. */
  literal: string | undefined;
  /**
   * The placeholders anywhere inside the word, nested substitutions included: `found[from]` up to
   * `found[to]` (exclusive) of the scan's list, which is in order of position.
   */
  found: readonly Item[];
  from: number;
  to: number;
  /** The redirection operator this word is the target of (`>`, `<<<`, …). */
  redirect?: string;
  /** Where the subscript of `name[…]` at the word's start ends (after its `]`). */
  subscriptEnd?: number;
}

export interface HeredocFrame {
  kind: 'heredoc';
  delimiter: string;
  stripTabs: boolean;
  quoted: boolean;
  danger: Danger | undefined;
  /** The command the body is the input of reads it as code (set when that command ends). */
  feeds?: string;
  /** `read`/`mapfile` of the command the body is the input of: the body is their value. */
  readers: Assignment[];
  /** The body is the input of a loop or group (`done <<EOF`). */
  toLoop: boolean;
  /** Where the body starts in the command. */
  bodyStart: number;
}

export interface PipelineStage {
  words: Word[];
  heredocs: HeredocFrame[];
  /** This stage reads its input as code: the reader's name. */
  readsCode: string | undefined;
}

export interface CodeFrame {
  kind: 'code';
  /** What ends this frame: `)` of `$(`, `<(` or an array literal, a backtick, or the end. */
  closer: ')' | '`' | null;
  danger: Danger | undefined;
  /** `x=( … )`: the words are array elements, `[…]=` at their start is a subscript. */
  arrayLiteral: boolean;
  /** Open `(` of subshells and groups inside this frame. */
  depth: number;
  word: Word | undefined;
  /** The words of the current simple command. */
  words: Word[];
  /** The index in `words` of the command's name, once a word that is not an assignment, a reserved word or a redirection came. */
  nameAt: number | undefined;
  /** Here-documents the current command opened. */
  heredocs: HeredocFrame[];
  /** The finished commands of the current pipeline. */
  pipeline: PipelineStage[];
  /** The next word is the target of this redirection operator. */
  pendingRedirect: string | undefined;
  doubleBracket: boolean;
  /** Open `case` statements, and whether a pattern (before its `)`) is being read. */
  caseDepth: number;
  casePattern: boolean;
  /** Per open `case`: the variable it tests, and whether the item read now checks for a non-digit and exits. */
  cases: Array<{ subject: string | undefined; checksDigits: boolean; exits: boolean }>;
}

/** A code place the text is in, from where it starts. */
interface Danger {
  place: CodePlace;
  span: Span;
}

export type Frame =
  | CodeFrame
  | HeredocFrame
  | { kind: 'double'; danger: Danger | undefined }
  | { kind: 'single'; danger: Danger | undefined }
  | { kind: 'ansi'; danger: Danger | undefined }
  | ParameterFrame
  | { kind: 'arithmetic'; closer: ')' | ']'; depth: number; danger: Danger; opens: boolean; subscriptOf?: Word };

/** `${…}`: `nameStart` is where its name starts (after `${`), `use` the variable it reads. */
export interface ParameterFrame {
  kind: 'parameter';
  inDouble: boolean;
  depth: number;
  nameStart: number;
  nameLength: number;
  inName: boolean;
  danger: Danger | undefined;
  /** The whole `${…}`, for messages (`end` set when it closes). */
  span: Span;
  /** The variable it reads, and where its name ended. */
  use?: VariableUse;
  nameEnd?: number;
}

export const wordEnd = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);
export const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const leadingName = /^[A-Za-z_][A-Za-z0-9_]*/;
/** Words that may come before a command's name without being it. */
export const reservedWords = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'time', 'esac']);

/** Calls `action` with each placeholder and variable use inside `word` at or after `from`. */
export function eachItem(word: Word | undefined, action: (item: Item) => void, from = 0): void {
  if (word) for (let at = word.from; at < word.to; at += 1) if (word.found[at]!.start >= from) action(word.found[at]!);
}

/** Whether `found[from]` up to `found[to]` holds a placeholder (not only variable uses). */
export function holdsPlaceholder(found: readonly Item[], from: number, to: number): boolean {
  for (let at = from; at < to; at += 1) if (!isUse(found[at]!)) return true;
  return false;
}

/** The text from the first word's start to the last one's end. */
export function spanOf(words: readonly Word[]): Span {
  const last = words[words.length - 1];
  return { start: words[0]?.start ?? 0, end: last === undefined ? 0 : last.start + last.raw.length };
}

/**
 * Whether `text` (a word, or its start so far) is an assignment up to `=`: `name=`, `name+=`,
 * `name[…]=`; `subscriptEnd` is where a subscript at its start ended, relative to the text.
 */
export function isAssignment(text: string, subscriptEnd: number | undefined): boolean {
  const name = leadingName.exec(text);
  if (!name) return false;
  let at = name[0].length;
  if (text[at] === '[') {
    if (subscriptEnd === undefined) return false;
    at = subscriptEnd;
  }
  return text.startsWith('=', at) || text.startsWith('+=', at);
}

/** A word that may come before a command's name: an assignment or a reserved word. */
export function isPrefixWord(word: Word): boolean {
  const subscriptEnd = word.subscriptEnd === undefined ? undefined : word.subscriptEnd - word.start;
  return isAssignment(word.raw, subscriptEnd) || (word.literal !== undefined && reservedWords.has(word.literal));
}

/** Index of the command's name: after assignments and reserved words. */
export function nameIndex(words: readonly Word[]): number {
  let index = 0;
  while (index < words.length && isPrefixWord(words[index]!)) index += 1;
  return index;
}

// ───────────────────────────── The cursor ─────────────────────────────

/** One pass over `command`: where it is, what it has found (in order of position), what is open. */
export interface ScanState {
  readonly command: string;
  /** The placeholders by where they start. */
  readonly starts: ReadonlyMap<number, PlaceholderSpan>;
  readonly found: Item[];
  readonly record: ShellScan;
  readonly stack: Frame[];
  /** Here-documents whose operator was read, waiting for the end of the line to start. */
  readonly pendingHeredocs: HeredocFrame[];
  before: ShellPlaceholder['before'];
  index: number;
}

/** A new frame of code (`closer`: what ends it; `arrayLiteral`: its words are elements). */
export function newCode(closer: CodeFrame['closer'], danger: Danger | undefined, arrayLiteral = false): CodeFrame {
  return {
    kind: 'code', closer, danger, arrayLiteral, depth: 0, word: undefined, words: [], nameAt: undefined, heredocs: [], pipeline: [],
    pendingRedirect: undefined, doubleBracket: false, caseDepth: 0, casePattern: false, cases: [],
  };
}

/** A new code place starting at `start`, unless the text is in one already. */
export function enter(danger: Danger | undefined, place: CodePlace, start: number): Danger {
  return danger ?? { place, span: { start } };
}

/** The innermost open frame. */
export function top(scan: ScanState): Frame {
  return scan.stack[scan.stack.length - 1]!;
}

/** Records a read of variable `name` at `start`…`end` in the frame on top. */
export function addUse(scan: ScanState, name: string, start: number, end: number): VariableUse {
  const danger = top(scan).danger;
  const use: VariableUse = { name, start, end };
  if (danger !== undefined) {
    use.codePlace = danger.place;
    use.where = danger.span;
  }
  scan.found.push(use);
  return use;
}

/** Where the name that starts at `from` ends. */
export function nameEndAt(scan: ScanState, from: number): number {
  let end = from;
  while (end < scan.command.length && /[A-Za-z0-9_]/.test(scan.command[end]!)) end += 1;
  return end;
}

/** The index in `found` of the first placeholder at or after `position`. */
export function firstFoundAt(scan: ScanState, position: number): number {
  let low = 0;
  let high = scan.found.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (scan.found[middle]!.start < position) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The placeholders and variable uses from `start` up to `end`. */
export function itemsBetween(scan: ScanState, start: number, end: number): Item[] {
  const items: Item[] = [];
  for (let at = firstFoundAt(scan, start); at < scan.found.length && scan.found[at]!.start < end; at += 1) items.push(scan.found[at]!);
  return items;
}

// `$` opens an expansion unless a placeholder follows it (then it is an ordinary `$`).
export function openDollar(scan: ScanState, inDouble: boolean): void {
  const next = scan.command[scan.index + 1];
  const danger = top(scan).danger;
  if (scan.starts.has(scan.index + 1)) {
    scan.before = 'dollar';
    scan.index += 1;
  } else if (next === '(' && scan.command[scan.index + 2] === '(') {
    scan.stack.push({ kind: 'arithmetic', closer: ')', depth: 0, danger: enter(danger, '$(( ))', scan.index), opens: danger === undefined });
    scan.index += 3;
  } else if (next === '(') {
    scan.stack.push(newCode(')', danger));
    scan.index += 2;
  } else if (next === '[') {
    scan.stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(danger, '$[ ]', scan.index), opens: danger === undefined });
    scan.index += 2;
  } else if (next === '{') {
    scan.stack.push({ kind: 'parameter', inDouble, depth: 0, nameStart: scan.index + 2, nameLength: 0, inName: true, danger, span: { start: scan.index } });
    scan.index += 2;
  } else if (next === "'" && !inDouble) {
    scan.stack.push({ kind: 'ansi', danger });
    scan.index += 2;
  } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
    // `$name`: a read of the variable (in arithmetic, its value is evaluated as arithmetic too).
    const end = nameEndAt(scan, scan.index + 1);
    addUse(scan, scan.command.slice(scan.index + 1, end), scan.index, end);
    scan.index = end;
  } else {
    scan.index += 1;
  }
}

// `\` escapes the next character; before a placeholder it is remembered instead.
export function escape(scan: ScanState): void {
  if (scan.starts.has(scan.index + 1)) {
    scan.before = 'backslash';
    scan.index += 1;
  } else {
    scan.index += 2;
  }
}

/** A backtick opens a command substitution. */
export function openBacktick(scan: ScanState): void {
  scan.stack.push(newCode('`', top(scan).danger));
  scan.index += 1;
}
