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

/** One `{{ }}` in a command: its path and where it stands (the caller finds them). */
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
interface Marks {
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

type Item = ShellPlaceholder | VariableUse;

function isUse(item: Item): item is VariableUse {
  return 'name' in item;
}

// ───────────────────────────── Words and commands ─────────────────────────────

interface Word {
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

interface HeredocFrame {
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

interface PipelineStage {
  words: Word[];
  heredocs: HeredocFrame[];
  /** This stage reads its input as code: the reader's name. */
  readsCode: string | undefined;
}

interface CodeFrame {
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

type Frame =
  | CodeFrame
  | HeredocFrame
  | { kind: 'double'; danger: Danger | undefined }
  | { kind: 'single'; danger: Danger | undefined }
  | { kind: 'ansi'; danger: Danger | undefined }
  | ParameterFrame
  | { kind: 'arithmetic'; closer: ')' | ']'; depth: number; danger: Danger; opens: boolean; subscriptOf?: Word };

/** `${…}`: `nameStart` is where its name starts (after `${`), `use` the variable it reads. */
interface ParameterFrame {
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

const wordEnd = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);
const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const leadingName = /^[A-Za-z_][A-Za-z0-9_]*/;
/** Words longer than this are never a command name, option or keyword the scanner looks for. */
const maxLiteralLength = 256;
/** Words that may come before a command's name without being it. */
const reservedWords = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'time', 'esac']);
/** Builtins whose arguments are assignments (`declare a[1]=x`). */
const declarationBuiltins = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
/** Commands that run the command named by their later words. */
const wrappers = new Set(['sudo', 'doas', 'env', 'nohup', 'nice', 'timeout', 'xargs', 'exec', 'command', 'builtin', 'stdbuf', 'setsid', 'time', 'chronic', 'unbuffer']);
/** Shells (and `su`-likes) whose `-c` argument is a script. */
const shells = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'su', 'runuser']);
/** Shell options that take a value (`bash -o pipefail -c …`). */
const shellValueOptions = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);
/** Interpreters and the options whose value is a program: `python -c`, `node -e`, `perl -e`, … */
const interpreterCodeOptions: Record<string, RegExp> = {
  python: /^-[A-Za-z]*c$/, python2: /^-[A-Za-z]*c$/, python3: /^-[A-Za-z]*c$/,
  node: /^(-e|--eval|-p|--print)$/, nodejs: /^(-e|--eval|-p|--print)$/,
  perl: /^-[A-Za-z]*[eE]$/, ruby: /^-[A-Za-z]*e$/, php: /^-r$/,
};
const awks = new Set(['awk', 'gawk', 'mawk', 'nawk']);
const arithmeticTests = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const sshValueOptions = new Set(['-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w', '-B']);

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

/** The program name a word runs: `/usr/bin/bash` → `bash`. */
function programName(word: Word | undefined): string | undefined {
  const literal = word?.literal;
  return literal === undefined ? undefined : literal.slice(literal.lastIndexOf('/') + 1);
}

/** Calls `action` with each placeholder and variable use inside `word` at or after `from`. */
function eachItem(word: Word | undefined, action: (item: Item) => void, from = 0): void {
  if (word) for (let at = word.from; at < word.to; at += 1) if (word.found[at]!.start >= from) action(word.found[at]!);
}

/** Whether `found[from]` up to `found[to]` holds a placeholder (not only variable uses). */
function holdsPlaceholder(found: readonly Item[], from: number, to: number): boolean {
  for (let at = from; at < to; at += 1) if (!isUse(found[at]!)) return true;
  return false;
}

/** The text from the first word's start to the last one's end. */
function spanOf(words: readonly Word[]): Span {
  const last = words[words.length - 1];
  return { start: words[0]?.start ?? 0, end: last === undefined ? 0 : last.start + last.raw.length };
}

function mark(words: Iterable<Word | undefined>, codePlace: CodePlace, where: Span, from = 0): void {
  for (const word of words) {
    eachItem(word, (item) => {
      if (item.codePlace !== undefined) return;
      item.codePlace = codePlace;
      item.where = where;
    }, from);
  }
}

function markReparsed(words: Iterable<Word | undefined>, by: string, from = 0): void {
  for (const word of words) eachItem(word, (item) => (item.reparsedBy ??= by), from);
}

/** Longest word whose bare names (`let x+1`, `[[ x -gt 1 ]]`) are looked for; longer ones are left alone to stay linear. */
const maxBareNameWord = 256;
/** A name in arithmetic that is not written as `$x` or `${x}` (bash reads its value as arithmetic too). */
const bareName = /(?<![A-Za-z0-9_$#{])[A-Za-z_][A-Za-z0-9_]*/g;

/** Records the bare names in the arithmetic words `words` as variable uses in `codePlace`. */
function markBareNames(words: Iterable<Word | undefined>, codePlace: CodePlace, where: Span, record: ShellScan): void {
  for (const word of words) {
    if (word === undefined || word.raw.length > maxBareNameWord) continue;
    for (const match of word.raw.matchAll(bareName)) {
      const start = word.start + match.index;
      record.uses.push({ name: match[0], start, end: start + match[0].length, codePlace, where });
    }
  }
}

/** `name=`, `name+=`, `name[…]=` at the start of a word: the name and where the value starts. */
function assignmentOf(word: Word): { name: string; valueStart: number } | undefined {
  const name = leadingName.exec(word.raw);
  if (!name) return undefined;
  let at = name[0].length;
  if (word.raw[at] === '[') {
    if (word.subscriptEnd === undefined) return undefined;
    at = word.subscriptEnd - word.start;
  }
  if (word.raw.startsWith('+=', at)) at += 1;
  return word.raw.startsWith('=', at) ? { name: name[0], valueStart: word.start + at + 1 } : undefined;
}

/** Records that `name` is given the value of `words` (their items from `from` on). */
function assign(record: ShellScan, name: string, words: readonly (Word | undefined)[], where: Span, from = 0, readsInput = false): Assignment {
  const sources: Item[] = [];
  for (const word of words) eachItem(word, (item) => sources.push(item), from);
  const assignment: Assignment = {
    name, start: where.start, where, sources, readsInput,
    digitsOnly: sources.length > 0 && sources.every((item) => isUse(item) && item.digitsOnly === true),
  };
  record.assignments.push(assignment);
  return assignment;
}

/**
 * A word's text when it expands nothing (quotes removed), however long: the script of
 * `bash -c '…'`. Undefined when it holds an expansion or a placeholder.
 */
function staticText(word: Word): string | undefined {
  if (word.to > word.from) return undefined;
  const raw = word.raw;
  let text = '';
  let inDouble = false;
  for (let index = 0; index < raw.length; index += 1) {
    const character = raw[index]!;
    if (character === '$' || character === '`') return undefined;
    if (character === "'" && !inDouble) {
      const close = raw.indexOf("'", index + 1);
      if (close === -1) return undefined;
      text += raw.slice(index + 1, close);
      index = close;
    } else if (character === '"') {
      inDouble = !inDouble;
    } else if (character === '\\') {
      const next = raw[index + 1] ?? '';
      text += inDouble && !'"\\$`\n'.includes(next) ? `\\${next}` : next;
      index += 1;
    } else {
      text += character;
    }
  }
  return inDouble ? undefined : text;
}

/**
 * Whether `text` (a word, or its start so far) is an assignment up to `=`: `name=`, `name+=`,
 * `name[…]=`; `subscriptEnd` is where a subscript at its start ended, relative to the text.
 */
function isAssignment(text: string, subscriptEnd: number | undefined): boolean {
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
function isPrefixWord(word: Word): boolean {
  const subscriptEnd = word.subscriptEnd === undefined ? undefined : word.subscriptEnd - word.start;
  return isAssignment(word.raw, subscriptEnd) || (word.literal !== undefined && reservedWords.has(word.literal));
}

/** Index of the command's name: after assignments and reserved words. */
function nameIndex(words: readonly Word[]): number {
  let index = 0;
  while (index < words.length && isPrefixWord(words[index]!)) index += 1;
  return index;
}

/** What one simple command does that the scan follows further. */
interface CommandFacts {
  /** The program that reads the command's standard input as code (`sh`, `bash -s`, `python -`). */
  readsCode: string | undefined;
  /** `read`/`mapfile` assignments whose value is the command's input. */
  readers: Assignment[];
  /** Only reserved words and redirections: the input is that of a loop or group (`done <<< …`). */
  compound: boolean;
}

/** Prompt strings: the shell expands their text (command substitutions included) when it prints them. */
const promptVariables = new Set(['PS0', 'PS1', 'PS2', 'PS3', 'PS4', 'PROMPT_COMMAND']);
/** Files a `source` reads its input from. */
const standardInputFiles = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/**
 * Looks at one finished simple command (redirection targets left out of `words`): marks the
 * placeholders and variable uses of its arguments that bash evaluates or that a command parses as
 * code again, and records the variables it assigns (`record`).
 */
function analyzeCommand(all: readonly Word[], record: ShellScan): CommandFacts {
  const words = all.filter((word) => word.redirect === undefined);
  const where = spanOf(all);
  let index = nameIndex(words);
  const facts: CommandFacts = { readsCode: undefined, readers: [], compound: index === words.length && words.some((word) => word.literal !== undefined && reservedWords.has(word.literal)) };
  // Assignments before the name: to the shell, or to the environment of the command.
  for (let at = 0; at < index; at += 1) {
    const target = assignmentOf(words[at]!);
    if (!target) continue;
    assign(record, target.name, [words[at]], where, target.valueStart);
    if (promptVariables.has(target.name)) mark([words[at]], 'a prompt string', where, target.valueStart);
    if (index < words.length) record.exported.add(target.name);
  }
  // `command read …` and `builtin let …` are the builtins themselves.
  while ((words[index]?.literal === 'command' || words[index]?.literal === 'builtin')) {
    index += 1;
    while (words[index]?.literal?.startsWith('-')) index += 1;
  }
  const name = words[index]?.literal;
  const args = words.slice(index + 1);
  const isOption = (word: Word) => word.literal?.startsWith('-') === true || word.literal?.startsWith('+') === true;
  const operands = args.filter((word) => !isOption(word));
  /** `read`/`mapfile` operands (the values of `valueOptions` skipped): variable names, given the input. */
  const readInto = (valueOptions: RegExp, fallback: string) => {
    let named = false;
    for (let position = 0; position < args.length; position += 1) {
      const literal = args[position]!.literal;
      if (literal !== undefined && valueOptions.test(literal)) position += 1;
      else if (literal === undefined || !literal.startsWith('-')) {
        mark([args[position]], 'a variable name', where);
        if (literal !== undefined && identifier.test(literal)) facts.readers.push(assign(record, literal, [], where, 0, true));
        named = true;
      }
    }
    if (!named) facts.readers.push(assign(record, fallback, [], where, 0, true));
  };

  switch (name) {
    case 'let':
      mark(args, 'let', where);
      markBareNames(args, 'let', where, record);
      break;
    case 'eval':
      markReparsed(args, 'eval');
      break;
    case 'trap':
      markReparsed(operands.slice(0, 1), 'trap');
      break;
    case 'alias':
      // The value is parsed as code wherever the alias is used (dash, bash as sh, expand_aliases).
      for (const word of operands) {
        const equals = word.raw.indexOf('=');
        if (equals !== -1) markReparsed([word], 'alias', word.start + equals);
      }
      break;
    case 'source':
    case '.': {
      // `source <(…)`, `. /dev/stdin <<< …`: generated text runs as a script.
      const script = operands[0]?.literal === '--' ? operands[1] : operands[0];
      if (script?.raw.startsWith('<(')) markReparsed([script], `${name} <(…)`);
      else if (script?.literal !== undefined && standardInputFiles.has(script.literal)) facts.readsCode = `${name} ${script.literal}`;
      break;
    }
    case 'read':
      // Every operand is a variable name; the values of -d -i -n -N -p -t -u are data.
      readInto(/^-[dinNptu]$/, 'REPLY');
      break;
    case 'mapfile':
    case 'readarray':
      readInto(/^-[dnOsuCc]$/, 'MAPFILE');
      break;
    case 'printf': {
      const option = args.findIndex((word) => word.literal === '-v');
      if (option !== -1) {
        mark([args[option + 1]], 'a variable name', where);
        const target = args[option + 1]?.literal;
        if (target !== undefined && identifier.test(target)) assign(record, target, args.slice(option + 2), where);
      }
      break;
    }
    case 'for':
    case 'select': {
      const variable = args[0]?.literal;
      if (variable !== undefined && identifier.test(variable) && args[1]?.literal === 'in') assign(record, variable, args.slice(2), where);
      break;
    }
    case 'set':
      if (args.some((word, position) => /^-[A-Za-z]*a/.test(word.literal ?? '') || (word.literal === '-o' && args[position + 1]?.literal === 'allexport'))) record.allExported = true;
      break;
    case 'unset':
      mark(operands, 'a variable name', where);
      break;
    case 'test':
    case '[': {
      args.forEach((word, position) => {
        if (word.literal === '-v') mark([args[position + 1]], 'a variable name', where);
      });
      break;
    }
    default:
      if (name !== undefined && declarationBuiltins.has(name)) {
        const flags = args.filter((word) => word.literal?.startsWith('-')).map((word) => word.literal!.slice(1)).join('');
        const integer = flags.includes('i');
        const array = /[aA]/.test(flags);
        // `declare -n r=…` names a variable with its value: the whole word is a name.
        const nameref = args.some((word) => isOption(word) && word.literal!.includes('n'));
        for (const word of operands) {
          const equals = word.raw.indexOf('=');
          const nameEnd = nameref || equals === -1 ? Infinity : word.start + equals;
          eachItem(word, (item) => {
            if (item.start >= nameEnd || item.codePlace !== undefined) return;
            item.codePlace = 'a variable name';
            item.where = where;
          });
          const target = leadingName.exec(word.raw)?.[0];
          if (target === undefined || (equals !== -1 && !'=+['.includes(word.raw[target.length]!))) continue;
          if (integer) record.integers.add(target);
          if (name === 'export' || flags.includes('x')) record.exported.add(target);
          if (equals === -1) continue;
          // The value of an integer is arithmetic; that of an array, unless an array literal, may be `(…)` with subscripts.
          if (integer) {
            mark([word], 'declare -i', where, nameEnd + 1);
          } else if (array && !word.raw.startsWith('(', equals + 1)) mark([word], 'declare -a', where, nameEnd + 1);
          else if (promptVariables.has(target)) mark([word], 'a prompt string', where, nameEnd + 1);
          assign(record, target, [word], where, nameEnd + 1);
        }
      }
  }
  facts.readsCode ??= reparsedArguments(words, index, record);
  return facts;
}

/**
 * Marks the arguments that another program runs as code: the script of `sh -c` (wherever the
 * shell appears in the command: `sudo sh -c`, `find -exec sh -c`), the program of an interpreter,
 * awk or sed, and the remote command of ssh. Returns the program that reads its input as code.
 */
function reparsedArguments(words: readonly Word[], nameAt: number, record: ShellScan): string | undefined {
  let readsInput: string | undefined;
  for (let at = nameAt; at < words.length; at += 1) {
    const program = programName(words[at]);
    if (program === undefined || !shells.has(program)) continue;
    let operand = false;
    for (let position = at + 1; position < words.length; position += 1) {
      const literal = words[position]!.literal;
      if (literal !== undefined && (/^-[A-Za-z]*c$/.test(literal) || literal === '--command')) {
        const script = words[position + 1];
        markReparsed([script], `${program} -c`);
        const text = script === undefined ? undefined : staticText(script);
        if (text !== undefined) record.nestedScripts.push({ text, by: `${program} -c`, where: spanOf([script!]) });
        return undefined;
      }
      if (literal !== undefined && shellValueOptions.has(literal)) position += 1;
      else if (literal === '-s' || literal === '-') break;
      else if (literal === undefined || !/^[-+]/.test(literal)) {
        // `bash <(…)`: the script is what the process substitution prints.
        if (words[position]!.raw.startsWith('<(')) markReparsed([words[position]], `${program} <(…)`);
        operand = true;
        break;
      }
    }
    if (!operand && at === nameAt) readsInput = program;
    break;
  }

  // The program run: the command's name, or the one after a wrapper and its options.
  let at = nameAt;
  while (at < words.length && wrappers.has(programName(words[at]) ?? '')) {
    at += 1;
    while (at < words.length) {
      const literal = words[at]!.literal;
      if (literal === undefined || !(literal.startsWith('-') || literal.includes('=') || /^\d+(\.\d+)?[smhd]?$/.test(literal))) break;
      at += 1;
    }
  }
  const program = programName(words[at]);
  if (program === undefined) return readsInput;
  const rest = words.slice(at + 1);
  if (at !== nameAt && shells.has(program) && !rest.some((word) => word.literal === undefined || !/^[-+]/.test(word.literal))) readsInput = program;

  const codeOption = Object.hasOwn(interpreterCodeOptions, program) ? interpreterCodeOptions[program] : undefined;
  if (codeOption) {
    const option = rest.findIndex((word) => word.literal !== undefined && codeOption.test(word.literal));
    if (option !== -1) markReparsed([rest[option + 1]], `${program} ${rest[option]!.literal}`);
    else if (rest.every((word) => word.literal !== undefined && word.literal.startsWith('-'))) readsInput = program;
  } else if (awks.has(program) || program === 'sed') {
    markProgramOperand(rest, program);
  } else if (program === 'ssh') {
    for (let position = 0; position < rest.length; position += 1) {
      const literal = rest[position]!.literal;
      if (literal !== undefined && sshValueOptions.has(literal)) position += 1;
      else if (literal === undefined || !literal.startsWith('-')) {
        markReparsed(rest.slice(position + 1), 'ssh');
        break;
      }
    }
  }
  return readsInput;
}

/** awk's program (its first operand unless -f) and sed's script (-e values, else its first operand). */
function markProgramOperand(rest: readonly Word[], program: string): void {
  const isAwk = program !== 'sed';
  const valueOptions = isAwk ? /^-[Fvf]$/ : /^-[efl]$/;
  let fromFile = false;
  let given = false;
  for (let position = 0; position < rest.length; position += 1) {
    const literal = rest[position]!.literal;
    if (literal === '-f' || literal?.startsWith('--file')) fromFile = true;
    if (literal === '-e' || literal === '--expression' || (isAwk && literal === '--source')) {
      markReparsed([rest[position + 1]], program);
      given = true;
      position += 1;
    } else if (literal?.startsWith('--expression=')) {
      markReparsed([rest[position]], program);
      given = true;
    } else if (literal !== undefined && valueOptions.test(literal)) {
      position += 1;
    } else if (literal === undefined || !literal.startsWith('-')) {
      if (!fromFile && !given) markReparsed([rest[position]], program);
      return;
    }
  }
}

/** `[[ … ]]`: the operands of -eq and the other number comparisons are arithmetic; -v takes a name. */
function analyzeDoubleBracket(words: readonly Word[], where: Span, record: ShellScan): void {
  words.forEach((word, position) => {
    if (word.literal !== undefined && arithmeticTests.has(word.literal)) {
      const operands = [words[position - 1], words[position + 1]];
      mark(operands, '[[ -eq ]]', where);
      markBareNames(operands, '[[ -eq ]]', where, record);
    }
    if (word.literal === '-v') mark([words[position + 1]], 'a variable name', where);
  });
}

// ───────────────────────────── The scan ─────────────────────────────

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
  const starts = new Map(placeholders.map((placeholder) => [placeholder.start, placeholder]));
  const found: Item[] = [];
  const record: ShellScan = {
    placeholders: [], uses: [], assignments: [], integers: new Set(), exported: new Set(), allExported: false,
    numberChecks: [], loopInput: [], nestedScripts: [],
  };
  const newCode = (closer: CodeFrame['closer'], danger: Danger | undefined, arrayLiteral = false): CodeFrame => ({
    kind: 'code', closer, danger, arrayLiteral, depth: 0, word: undefined, words: [], nameAt: undefined, heredocs: [], pipeline: [],
    pendingRedirect: undefined, doubleBracket: false, caseDepth: 0, casePattern: false, cases: [],
  });
  /** A new code place starting at `start`, unless the text is in one already. */
  const enter = (danger: Danger | undefined, place: CodePlace, start: number): Danger => danger ?? { place, span: { start } };
  /** Records a read of variable `name` at `start`…`end` in the frame on top. */
  const addUse = (name: string, start: number, end: number): VariableUse => {
    const danger = top().danger;
    const use: VariableUse = { name, start, end };
    if (danger !== undefined) {
      use.codePlace = danger.place;
      use.where = danger.span;
    }
    found.push(use);
    return use;
  };
  /** Where the name that starts at `from` ends. */
  const nameEndAt = (from: number): number => {
    let end = from;
    while (end < command.length && /[A-Za-z0-9_]/.test(command[end]!)) end += 1;
    return end;
  };
  const stack: Frame[] = [newCode(null, undefined)];
  const pendingHeredocs: HeredocFrame[] = [];
  let before: ShellPlaceholder['before'] = null;
  let index = 0;

  const top = () => stack[stack.length - 1]!;
  const dangerHere = () => top().danger;
  const touchWord = (frame: CodeFrame, at: number): Word => (frame.word ??= { start: at, raw: '', literal: undefined, found, from: 0, to: 0 });
  const itemsBetween = (start: number, end: number): Item[] => {
    const items: Item[] = [];
    for (let at = firstFoundAt(start); at < found.length && found[at]!.start < end; at += 1) items.push(found[at]!);
    return items;
  };
  /** The index in `found` of the first placeholder at or after `position`. */
  const firstFoundAt = (position: number): number => {
    let low = 0;
    let high = found.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (found[middle]!.start < position) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const resetCommand = (frame: CodeFrame): void => {
    frame.words = [];
    frame.nameAt = undefined;
  };
  const openHeredoc = (heredoc: HeredocFrame, at: number): void => {
    heredoc.bodyStart = at;
    stack.push(heredoc);
  };
  /**
   * Ends a here-document body at `end`. The body is no word of its command, but it may be the
   * input of a reader of code: unquoted, the values are in that code; quoted, the code holds only
   * the references, which a shell reading it expands itself.
   */
  const closeHeredoc = (heredoc: HeredocFrame, end: number): void => {
    if (heredoc.readers.length > 0 || heredoc.toLoop) {
      const body = itemsBetween(heredoc.bodyStart, end);
      for (const reader of heredoc.readers) reader.sources.push(...body);
      if (heredoc.toLoop) record.loopInput.push(...body);
    }
    if (heredoc.feeds === undefined) return;
    const feeds = heredoc.feeds;
    if (heredoc.quoted && shells.has(feeds)) record.nestedScripts.push({ text: command.slice(heredoc.bodyStart, end), by: feeds, where: { start: heredoc.bodyStart, end } });
    for (let at = firstFoundAt(heredoc.bodyStart); at < found.length && found[at]!.start < end; at += 1) {
      if (!heredoc.quoted) found[at]!.reparsedBy ??= feeds;
      else if (shells.has(feeds)) found[at]!.expandedByReader = true;
    }
  };

  /** Ends the word being read in `frame` at `end` and files it in the current command. */
  const finishWord = (frame: CodeFrame, end: number): void => {
    const word = frame.word;
    if (!word) return;
    frame.word = undefined;
    word.raw = command.slice(word.start, end);
    word.from = firstFoundAt(word.start);
    word.to = found.length;
    word.literal = literalOf(word.raw, holdsPlaceholder(found, word.from, word.to));
    if (frame.pendingRedirect !== undefined) {
      word.redirect = frame.pendingRedirect;
      frame.pendingRedirect = undefined;
    }
    if (frame.casePattern) {
      // A pattern is data; `esac` where a pattern could start ends the case.
      if (word.literal === 'esac' && frame.words.length === 0) {
        endCase(frame, word.start);
        frame.casePattern = false;
      } else if (/^\*\[[!^]0-9\]\*$/.test(word.raw)) {
        const open = frame.cases[frame.cases.length - 1];
        if (open) open.checksDigits = true;
      }
      return;
    }
    const atCommandStart = word.redirect === undefined && frame.nameAt === undefined;
    if (atCommandStart && word.literal === 'esac' && frame.caseDepth > 0) {
      endCase(frame, word.start);
      return;
    }
    frame.words.push(word);
    if (atCommandStart && !isPrefixWord(word)) frame.nameAt = frame.words.length - 1;
    if (atCommandStart && word.literal === '[[') frame.doubleBracket = true;
    else if (frame.doubleBracket && word.literal === ']]') {
      const open = frame.words.findIndex((candidate) => candidate.literal === '[[');
      analyzeDoubleBracket(frame.words.slice(open + 1, -1), spanOf(frame.words.slice(open)), record);
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
  };

  /** Ends the item of the case read now at `at`: an item for non-digits that exits checks the variable. */
  const endCaseItem = (frame: CodeFrame, at: number): void => {
    const open = frame.cases[frame.cases.length - 1];
    if (!open) return;
    if (open.subject !== undefined && open.checksDigits && open.exits) record.numberChecks.push({ name: open.subject, at });
    open.checksDigits = false;
    open.exits = false;
  };
  const endCase = (frame: CodeFrame, at: number): void => {
    endCaseItem(frame, at);
    frame.cases.pop();
    frame.caseDepth -= 1;
  };

  /** Ends the simple command of `frame`; `pipe`: it is a stage of a pipeline that goes on. */
  const finishCommand = (frame: CodeFrame, end: number, pipe = false): void => {
    finishWord(frame, end);
    const words = frame.words;
    const heredocs = frame.heredocs;
    resetCommand(frame);
    frame.heredocs = [];
    frame.pendingRedirect = undefined;
    frame.doubleBracket = false;
    // An array literal's words are elements, not a command.
    const facts = words.length > 0 && !frame.arrayLiteral ? analyzeCommand(words, record) : undefined;
    const readsCode = facts?.readsCode;
    const inputs = words.filter((word) => word.redirect === '<<<' || word.redirect === '<');
    if (readsCode !== undefined) {
      markReparsed(words.filter((word) => word.redirect === '<<<'), readsCode);
      for (const heredoc of heredocs) heredoc.feeds = readsCode;
      for (const word of inputs) {
        const text = word.redirect === '<<<' ? staticText(word) : undefined;
        if (text !== undefined && shells.has(readsCode)) record.nestedScripts.push({ text, by: readsCode, where: spanOf([word]) });
      }
    }
    // What `read` gets: its redirected input, a here-document, or what earlier stages of its pipeline print.
    for (const reader of facts?.readers ?? []) {
      for (const word of inputs) eachItem(word, (item) => reader.sources.push(item));
      for (const stage of frame.pipeline) for (const word of stage.words) eachItem(word, (item) => reader.sources.push(item));
      for (const heredoc of heredocs) heredoc.readers.push(reader);
    }
    if (facts?.compound) {
      for (const word of inputs) eachItem(word, (item) => record.loopInput.push(item));
      for (const heredoc of heredocs) heredoc.toLoop = true;
    }
    const open = frame.cases[frame.cases.length - 1];
    if (open?.checksDigits && words.length > 0) {
      const name = words[nameIndex(words)]?.literal;
      if (name === 'exit' || name === 'return') open.exits = true;
    }
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
  };

  /**
   * The name of `${…}` ended before `character`: a read of that variable, or with `!` of the
   * variable its value names (`${!x}`, a code place); `${#x}`, `${!x*}` and `${!x[@]}` read no value.
   */
  const readParameterName = (frame: ParameterFrame, character: string): void => {
    frame.nameEnd = index;
    const name = command.slice(frame.nameStart, index);
    if (identifier.test(name)) {
      frame.use = addUse(name, frame.span.start, index);
    } else if (name.startsWith('!') && identifier.test(name.slice(1)) && !'*@['.includes(character)) {
      found.push({ name: name.slice(1), start: frame.nameStart + 1, end: index, codePlace: '${!x}', where: frame.span });
    }
  };
  /** `}` of `${…}`: `${x//[!0-9]/}` keeps only digits of the value. */
  const closeParameter = (frame: ParameterFrame): void => {
    stack.pop();
    frame.span.end = index + 1;
    if (frame.use !== undefined && /^\/\/\[[!^]0-9\]\/?$/.test(command.slice(frame.nameEnd, index))) frame.use.digitsOnly = true;
  };

  // `$` opens an expansion unless a placeholder follows it (then it is an ordinary `$`).
  const openDollar = (inDouble: boolean): void => {
    const next = command[index + 1];
    const danger = dangerHere();
    if (starts.has(index + 1)) {
      before = 'dollar';
      index += 1;
    } else if (next === '(' && command[index + 2] === '(') {
      stack.push({ kind: 'arithmetic', closer: ')', depth: 0, danger: enter(danger, '$(( ))', index), opens: danger === undefined });
      index += 3;
    } else if (next === '(') {
      stack.push(newCode(')', danger));
      index += 2;
    } else if (next === '[') {
      stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(danger, '$[ ]', index), opens: danger === undefined });
      index += 2;
    } else if (next === '{') {
      stack.push({ kind: 'parameter', inDouble, depth: 0, nameStart: index + 2, nameLength: 0, inName: true, danger, span: { start: index } });
      index += 2;
    } else if (next === "'" && !inDouble) {
      stack.push({ kind: 'ansi', danger });
      index += 2;
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      // `$name`: a read of the variable (in arithmetic, its value is evaluated as arithmetic too).
      const end = nameEndAt(index + 1);
      addUse(command.slice(index + 1, end), index, end);
      index = end;
    } else {
      index += 1;
    }
  };
  // `\` escapes the next character; before a placeholder it is remembered instead.
  const escape = (): void => {
    if (starts.has(index + 1)) {
      before = 'backslash';
      index += 1;
    } else {
      index += 2;
    }
  };
  const openBacktick = (): void => {
    stack.push(newCode('`', dangerHere()));
    index += 1;
  };

  /** One character of code (the frame on top is `frame`). */
  const readCode = (frame: CodeFrame, character: string): void => {
    const next = command[index + 1];
    if (character === '\\') {
      touchWord(frame, index);
      escape();
    } else if (character === '$') {
      touchWord(frame, index);
      openDollar(false);
    } else if (character === '#' && frame.word === undefined) {
      const newline = command.indexOf('\n', index);
      index = newline === -1 ? command.length : newline;
    } else if (character === "'" || character === '"') {
      touchWord(frame, index);
      stack.push(character === "'" ? { kind: 'single', danger: frame.danger } : { kind: 'double', danger: frame.danger });
      index += 1;
    } else if (character === '`') {
      if (frame.closer === '`') {
        finishCommand(frame, index);
        stack.pop();
        index += 1;
      } else {
        touchWord(frame, index);
        openBacktick();
      }
    } else if (character === '[' && frame.word !== undefined && subscriptFollows(frame)) {
      stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(frame.danger, 'an array subscript', frame.word.start), opens: frame.danger === undefined, subscriptOf: frame.word });
      index += 1;
    } else if (character === '[' && frame.word === undefined && frame.arrayLiteral) {
      touchWord(frame, index);
      stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: enter(frame.danger, 'an array subscript', index), opens: frame.danger === undefined });
      index += 1;
    } else if (frame.doubleBracket && (character === '<' || character === '>' || character === '(' || character === ')' || character === '&' || character === '|')) {
      // Inside [[ ]] these are operators of the test, not redirections or lists.
      finishWord(frame, index);
      const length = (character === '&' || character === '|') && next === character ? 2 : 1;
      frame.words.push({ start: index, raw: command.slice(index, index + length), literal: command.slice(index, index + length), found, from: 0, to: 0 });
      index += length;
    } else if ((character === '<' || character === '>') && next === '(') {
      touchWord(frame, index); // process substitution: a command inside a word
      stack.push(newCode(')', frame.danger));
      index += 2;
    } else if (character === '<' || character === '>') {
      readRedirection(frame, character);
    } else if (character === '(' && next === '(' && frame.word === undefined && !frame.arrayLiteral) {
      stack.push({ kind: 'arithmetic', closer: ')', depth: 0, danger: enter(frame.danger, '(( ))', index), opens: frame.danger === undefined });
      index += 2;
    } else if (character === '(') {
      const word = frame.word;
      if (word !== undefined && command[index - 1] === '=' && isAssignment(command.slice(word.start, index), word.subscriptEnd === undefined ? undefined : word.subscriptEnd - word.start)) {
        stack.push(newCode(')', frame.danger, true));
      } else if (!frame.casePattern) {
        finishCommand(frame, index);
        frame.depth += 1;
      }
      index += 1;
    } else if (character === ')') {
      if (frame.casePattern) {
        finishWord(frame, index);
        frame.casePattern = false;
        resetCommand(frame);
      } else if (frame.depth > 0) {
        finishCommand(frame, index);
        frame.depth -= 1;
      } else if (frame.closer === ')') {
        finishCommand(frame, index);
        stack.pop();
      }
      index += 1;
    } else if (character === '|') {
      if (frame.casePattern) finishWord(frame, index);
      else if (next === '|') finishCommand(frame, index);
      else finishCommand(frame, index, true);
      index += next === '|' || next === '&' ? 2 : 1;
    } else if (character === '&') {
      if (next === '>') {
        finishWord(frame, index);
        index += 1;
        readRedirection(frame, '>');
      } else {
        finishCommand(frame, index);
        index += next === '&' ? 2 : 1;
      }
    } else if (character === ';') {
      finishCommand(frame, index);
      // `;;`, `;&` and `;;&` end a case item: a pattern follows.
      if (frame.caseDepth > 0 && (next === ';' || next === '&')) {
        endCaseItem(frame, index);
        frame.casePattern = true;
        index += next === ';' && command[index + 2] === '&' ? 3 : 2;
      } else {
        index += 1;
      }
    } else if (character === '\n') {
      if (!frame.doubleBracket) finishCommand(frame, index);
      else finishWord(frame, index);
      index += 1;
      const heredoc = pendingHeredocs.shift();
      if (heredoc) openHeredoc(heredoc, index);
    } else if (character === ' ' || character === '\t') {
      finishWord(frame, index);
      index += 1;
    } else {
      touchWord(frame, index);
      index += 1;
    }
  };

  /** `name[` at the start of an assignment (before the command, or after declare and the like). */
  const subscriptFollows = (frame: CodeFrame): boolean => {
    const name = command.slice(frame.word!.start, index);
    if (!identifier.test(name)) return false;
    const at = frame.nameAt;
    return at === undefined || declarationBuiltins.has(frame.words[at]!.literal ?? '');
  };

  /** A redirection operator at `index`; here-documents are queued, other targets marked. */
  const readRedirection = (frame: CodeFrame, character: string): void => {
    // Digits right before the operator name a file descriptor (`2>`), not an argument.
    if (frame.word !== undefined && /^\d+$/.test(command.slice(frame.word.start, index))) frame.word = undefined;
    else finishWord(frame, index);
    if (character === '<' && command.startsWith('<<<', index)) {
      frame.pendingRedirect = '<<<';
      index += 3;
    } else if (character === '<' && command.startsWith('<<', index)) {
      index = readHeredocOperator(command, index, starts, (heredoc) => {
        const full: HeredocFrame = { kind: 'heredoc', ...heredoc, danger: frame.danger, bodyStart: 0, readers: [], toLoop: false };
        pendingHeredocs.push(full);
        frame.heredocs.push(full);
      });
    } else {
      const operator = /^(<>|<&|>>|>&|>\||<|>)/.exec(command.slice(index, index + 2))![0];
      frame.pendingRedirect = operator;
      index += operator.length;
    }
  };

  while (index < command.length) {
    const frame = top();

    // A here-document body ends at a line that is exactly its delimiter.
    if (frame.kind === 'heredoc' && (index === 0 || command[index - 1] === '\n')) {
      const newline = command.indexOf('\n', index);
      const lineEnd = newline === -1 ? command.length : newline;
      let line = command.slice(index, lineEnd);
      if (frame.stripTabs) line = line.replace(/^\t+/, '');
      if (line === frame.delimiter) {
        stack.pop();
        closeHeredoc(frame, index);
        index = lineEnd + 1;
        const next = pendingHeredocs.shift();
        if (next && index < command.length) openHeredoc(next, index);
        continue;
      }
    }

    const placeholder = starts.get(index);
    if (placeholder) {
      const shellPlaceholder: ShellPlaceholder = { ...placeholder, quoting: quotingOf(frame), before };
      if (frame.danger !== undefined) {
        shellPlaceholder.codePlace = frame.danger.place;
        shellPlaceholder.where = frame.danger.span;
      }
      if (frame.kind === 'parameter' && frame.inName) {
        // `${!{{x}}}`: the value would name the variable to read.
        if (frame.nameLength === 1 && command[frame.nameStart] === '!') {
          shellPlaceholder.codePlace = '${!x}';
          shellPlaceholder.where = frame.span;
        }
        frame.inName = false;
      }
      if (frame.kind === 'code') touchWord(frame, index);
      found.push(shellPlaceholder);
      before = null;
      index = placeholder.end;
      continue;
    }
    before = null;

    const character = command[index]!;
    switch (frame.kind) {
      case 'code':
        readCode(frame, character);
        break;

      case 'single':
        if (character === "'") stack.pop();
        index += 1;
        break;

      case 'ansi':
        if (character === '\\') escape();
        else {
          if (character === "'") stack.pop();
          index += 1;
        }
        break;

      case 'double':
        if (character === '\\') escape();
        else if (character === '$') openDollar(true);
        else if (character === '`') openBacktick();
        else {
          if (character === '"') stack.pop();
          index += 1;
        }
        break;

      case 'heredoc':
        if (frame.quoted) index += 1;
        else if (character === '\\') escape();
        else if (character === '$') openDollar(true);
        else if (character === '`') openBacktick();
        else index += 1;
        break;

      case 'parameter':
        if (frame.inName) {
          // `${name[…]…}` has a subscript; `${name:…}` (not `:-`, `:=`, `:?`, `:+`) an arithmetic offset.
          const nameCharacter = /[A-Za-z0-9_]/.test(character) || (frame.nameLength === 0 && '!#@*?$-'.includes(character));
          if (nameCharacter) {
            frame.nameLength += 1;
            index += 1;
            break;
          }
          frame.inName = false;
          if (frame.nameEnd === undefined) readParameterName(frame, character);
          if (character === '[') {
            stack.push({ kind: 'arithmetic', closer: ']', depth: 0, danger: frame.danger ?? { place: 'an array subscript', span: frame.span }, opens: false });
            frame.inName = true; // `${a[1]:2}`: an offset may follow the subscript
            index += 1;
            break;
          }
          if (character === ':' && !'-=?+'.includes(command[index + 1] ?? '')) {
            frame.danger ??= { place: '${x:offset}', span: frame.span };
            index += 1;
            break;
          }
        }
        if (character === '\\') escape();
        else if (character === '$') openDollar(frame.inDouble);
        else if (character === '`') openBacktick();
        else if (frame.danger !== undefined && /[A-Za-z_]/.test(character) && !/[A-Za-z0-9_#]/.test(command[index - 1]!)) {
          // A bare name in an offset (`${s:x}`), or in a word that arithmetic reads: its value is evaluated.
          const end = nameEndAt(index);
          addUse(command.slice(index, end), index, end);
          index = end;
        } else {
          if (character === '}') {
            if (frame.depth > 0) frame.depth -= 1;
            else closeParameter(frame);
          } else if (character === '{') frame.depth += 1;
          else if (character === '"') stack.push({ kind: 'double', danger: frame.danger });
          else if (character === "'" && !frame.inDouble) stack.push({ kind: 'single', danger: frame.danger });
          index += 1;
        }
        break;

      case 'arithmetic':
        if (character === '\\') escape();
        else if (character === '$') openDollar(false);
        else if (character === '`') openBacktick();
        else if (character === frame.closer && frame.depth === 0) {
          stack.pop();
          if (frame.subscriptOf) frame.subscriptOf.subscriptEnd = index + 1;
          index += frame.closer === ')' && command[index + 1] === ')' ? 2 : 1;
          if (frame.opens) frame.danger.span.end = index;
        } else if (/[A-Za-z_]/.test(character) && !/[A-Za-z0-9_#]/.test(command[index - 1] ?? '')) {
          // A bare name: bash reads the variable's value and evaluates it as arithmetic in turn.
          const end = nameEndAt(index);
          addUse(command.slice(index, end), index, end);
          index = end;
        } else {
          const opener = frame.closer === ')' ? '(' : '[';
          if (character === opener) frame.depth += 1;
          else if (character === frame.closer) frame.depth -= 1;
          else if (character === '"') stack.push({ kind: 'double', danger: frame.danger });
          else if (character === "'") stack.push({ kind: 'single', danger: frame.danger });
          index += 1;
        }
        break;
    }
  }
  // Close what the command left open, so its last command is looked at too.
  for (let at = stack.length - 1; at >= 0; at -= 1) {
    const frame = stack[at]!;
    if (frame.kind === 'code') finishCommand(frame, command.length);
    if (frame.kind === 'heredoc') closeHeredoc(frame, command.length);
  }
  for (const item of found) {
    if (isUse(item)) record.uses.push(item);
    else record.placeholders.push(item);
  }
  return record;
}

/**
 * Reads `<<[-]word` starting at `index` and hands over its here-document (the body starts after
 * the next unquoted newline). Any quoting in the word makes the body literal. Returns the index
 * after the word. A word that is empty or starts with a placeholder gives no here-document.
 */
function readHeredocOperator(
  command: string, index: number, starts: Map<number, PlaceholderSpan>,
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
