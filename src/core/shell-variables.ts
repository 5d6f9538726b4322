// What a command does to shell variables, as the scanner records it for core/shell-flow.ts
// (DESIGN §4 "Shell safety"): the assignments and what each value is made of, the input `read`
// and `mapfile` get (redirections, here-documents, earlier stages of a pipeline, a loop's input),
// and the `case` statements that check a variable holds only digits. Following a placeholder
// through these is shell-flow.ts's job; marking code places is core/shell-code-places.ts's.

import { eachItem, isUse, itemsBetween, leadingName, nameIndex, type Assignment, type CodeFrame, type HeredocFrame, type Item, type ScanState, type ShellScan, type Span, type Word } from './shell-syntax';

/** Prompt strings: the shell expands their text (command substitutions included) when it prints them. */
export const promptVariables = new Set(['PS0', 'PS1', 'PS2', 'PS3', 'PS4', 'PROMPT_COMMAND']);

/** `name=`, `name+=`, `name[…]=` at the start of a word: the name and where the value starts. */
export function assignmentOf(word: Word): { name: string; valueStart: number } | undefined {
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
export function assign(record: ShellScan, name: string, words: readonly (Word | undefined)[], where: Span, from = 0, readsInput = false): Assignment {
  const sources: Item[] = [];
  for (const word of words) eachItem(word, (item) => sources.push(item), from);
  const assignment: Assignment = {
    name, start: where.start, where, sources, readsInput,
    digitsOnly: sources.length > 0 && sources.every((item) => isUse(item) && item.digitsOnly === true),
  };
  record.assignments.push(assignment);
  return assignment;
}


/** Ends the item of the case read now at `at`: an item for non-digits that exits checks the variable. */
export function endCaseItem(scan: ScanState, frame: CodeFrame, at: number): void {
  const open = frame.cases[frame.cases.length - 1];
  if (!open) return;
  if (open.subject !== undefined && open.checksDigits && open.exits) scan.record.numberChecks.push({ name: open.subject, at });
  open.checksDigits = false;
  open.exits = false;
}

export function endCase(scan: ScanState, frame: CodeFrame, at: number): void {
  endCaseItem(scan, frame, at);
  frame.cases.pop();
  frame.caseDepth -= 1;
}

/**
 * What a finished command's `read`/`mapfile` (`readers`) get: its redirected input (`inputs`), a
 * here-document, or what earlier stages of its pipeline print; a loop's or group's input
 * (`compound`) goes to the `read`s inside it. In a `case` item that looks for a non-digit, an
 * `exit` or `return` makes the item a check.
 */
export function recordInput(
  scan: ScanState, frame: CodeFrame, words: readonly Word[], heredocs: readonly HeredocFrame[], inputs: readonly Word[],
  readers: readonly Assignment[], compound: boolean,
): void {
  for (const reader of readers) {
    for (const word of inputs) eachItem(word, (item) => reader.sources.push(item));
    for (const stage of frame.pipeline) for (const word of stage.words) eachItem(word, (item) => reader.sources.push(item));
    for (const heredoc of heredocs) heredoc.readers.push(reader);
  }
  if (compound) {
    for (const word of inputs) eachItem(word, (item) => scan.record.loopInput.push(item));
    for (const heredoc of heredocs) heredoc.toLoop = true;
  }
  const open = frame.cases[frame.cases.length - 1];
  if (open?.checksDigits && words.length > 0) {
    const name = words[nameIndex(words)]?.literal;
    if (name === 'exit' || name === 'return') open.exits = true;
  }
}

/** A here-document body that ends at `end` is the value of the `read`s it feeds, and a loop's input. */
export function giveBodyToReaders(scan: ScanState, heredoc: HeredocFrame, end: number): void {
  if (heredoc.readers.length === 0 && !heredoc.toLoop) return;
  const body = itemsBetween(scan, heredoc.bodyStart, end);
  for (const reader of heredoc.readers) reader.sources.push(...body);
  if (heredoc.toLoop) scan.record.loopInput.push(...body);
}
