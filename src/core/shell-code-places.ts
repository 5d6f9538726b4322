// Code places and re-parsing in one finished simple command (DESIGN §4 "Shell safety"): which of
// its words bash evaluates as code (`let`, `[[ -eq ]]`, `read x`, `declare -i`, `unset`, …), and
// which another program parses as code again (`eval`, `trap`, `alias`, `source <(…)`, `sh -c`,
// `python -c`, awk and sed programs, ssh's remote command). The words come from the word reader
// (core/shell-words.ts); the variables a command assigns are recorded with core/shell-variables.ts.

import { eachItem, identifier, leadingName, nameIndex, reservedWords, spanOf, type Assignment, type CodePlace, type ShellScan, type Span, type Word } from './shell-syntax';
import { assign, assignmentOf, promptVariables } from './shell-variables';

/** Builtins whose arguments are assignments (`declare a[1]=x`). */
export const declarationBuiltins = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
/** Commands that run the command named by their later words. */
const wrappers = new Set(['sudo', 'doas', 'env', 'nohup', 'nice', 'timeout', 'xargs', 'exec', 'command', 'builtin', 'stdbuf', 'setsid', 'time', 'chronic', 'unbuffer']);
/** Shells (and `su`-likes) whose `-c` argument is a script. */
export const shells = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'su', 'runuser']);
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

/** The program name a word runs: `/usr/bin/bash` → `bash`. */
function programName(word: Word | undefined): string | undefined {
  const literal = word?.literal;
  return literal === undefined ? undefined : literal.slice(literal.lastIndexOf('/') + 1);
}

export function mark(words: Iterable<Word | undefined>, codePlace: CodePlace, where: Span, from = 0): void {
  for (const word of words) {
    eachItem(word, (item) => {
      if (item.codePlace !== undefined) return;
      item.codePlace = codePlace;
      item.where = where;
    }, from);
  }
}

export function markReparsed(words: Iterable<Word | undefined>, by: string, from = 0): void {
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

/**
 * A word's text when it expands nothing (quotes removed), however long: the script of
 * `bash -c '…'`. Undefined when it holds an expansion or a placeholder.
 */
export function staticText(word: Word): string | undefined {
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

/** What one simple command does that the scan follows further. */
interface CommandFacts {
  /** The program that reads the command's standard input as code (`sh`, `bash -s`, `python -`). */
  readsCode: string | undefined;
  /** `read`/`mapfile` assignments whose value is the command's input. */
  readers: Assignment[];
  /** Only reserved words and redirections: the input is that of a loop or group (`done <<< …`). */
  compound: boolean;
}

/** Files a `source` reads its input from. */
const standardInputFiles = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/**
 * Looks at one finished simple command (redirection targets left out of `words`): marks the
 * placeholders and variable uses of its arguments that bash evaluates or that a command parses as
 * code again, and records the variables it assigns (`record`).
 */
export function analyzeCommand(all: readonly Word[], record: ShellScan): CommandFacts {
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
export function analyzeDoubleBracket(words: readonly Word[], where: Span, record: ShellScan): void {
  words.forEach((word, position) => {
    if (word.literal !== undefined && arithmeticTests.has(word.literal)) {
      const operands = [words[position - 1], words[position + 1]];
      mark(operands, '[[ -eq ]]', where);
      markBareNames(operands, '[[ -eq ]]', where, record);
    }
    if (word.literal === '-v') mark([words[position + 1]], 'a variable name', where);
  });
}
