// Following a placeholder into the shell variables that hold it (DESIGN §4 "Shell safety").
// `x="{{issue.title}}"; echo $((x))` runs a title `a[$(touch X)]` as surely as
// `echo $(( {{issue.title}} ))` does: the scanner (core/shell-scan.ts) reports where each variable
// is assigned and where it is read, and this file follows values from placeholders through
// assignments (plain, `export`, `declare`/`local`/`readonly`/`typeset`, `read`, `printf -v`,
// `mapfile`, `for`), transitively (`y=$x`), to the code places where a variable is read.
//
// The analysis does not depend on the order of commands, because loops and functions run them in
// another order than they are written: a variable holds a placeholder if any assignment in the
// command gives it one. Two checks are believed, both written after every assignment that gives
// the variable a placeholder: `case "$n" in *[!0-9]*) exit …;; esac` and `n=${n//[!0-9]/}`.
// Variables that Factory sets for every step (`FACTORY_*`) hold run text from the start, and so
// do the ones the caller names (a step's own environment). A literal script that a nested shell
// runs (`bash -c '…'`, a quoted here-document into `sh`) is followed too, with the exported
// variables that hold placeholders. What leaves the command through files or other programs is
// not followed (docs/SECURITY.md).

import { scanShell } from './shell-scan';
import type { Assignment, CodePlace, PlaceholderSpan, ShellScan, Span, VariableUse } from './shell-syntax';
import { promptVariables } from './shell-variables';

/** Where a value read at a code place comes from. */
export interface Origin {
  /** The placeholder's path (`issue.title`), when a placeholder put it there. */
  path: string | undefined;
  /** The variable that held it before the command started (`FACTORY_ISSUE_TITLE`, a step's environment). */
  outside?: string;
  /** The variable that holds it (unset: the placeholder itself is the value). */
  variable?: string;
  /** The origin of the variable it was copied from (`y=$x`: x's). */
  via?: Origin;
}

/** The variables a value went through, first to last (at most `limit`, the last ones). */
export function variablesThrough(origin: Origin, limit = 4): string[] {
  const names: string[] = [];
  for (let at: Origin | undefined = origin; at !== undefined && names.length < limit; at = at.via) if (at.variable !== undefined) names.unshift(at.variable);
  return names;
}

/** A value from a placeholder that reaches a code place through variables (or an integer's or a prompt's value). */
export interface ValueFlow {
  severity: 'error' | 'warning';
  origin: Origin;
  /** Set for errors: where the shell evaluates the value as code. */
  codePlace?: CodePlace;
  /** Set for warnings: the command that parses the value as code again. */
  reparsedBy?: string;
  /** The text of the code place, shortened. */
  text: string;
  /** The nested shells whose scripts it is in, outermost first (`bash -c`). */
  scripts: string[];
}

/** How deep nested scripts (`bash -c 'bash -c …'`) are followed; each level scans its text again. */
const maxNestedScripts = 3;
const longestExcerpt = 60;

/** The code place's text, on one line and at most `longestExcerpt` characters long. */
function excerpt(command: string, span: Span | undefined, fallback: Span): string {
  const start = span?.start ?? fallback.start;
  const end = span?.end ?? Math.min(command.length, start + longestExcerpt);
  const text = command.slice(start, Math.min(end, start + longestExcerpt + 1)).replace(/\s+/g, ' ');
  return text.length > longestExcerpt ? `${text.slice(0, longestExcerpt - 1)}…` : text;
}

/**
 * The values from placeholders (`placeholders`, and the variables in `outside`) that reach a code
 * place in `command` through shell variables: errors where the shell evaluates them as code
 * (arithmetic, subscripts, variable names, `${!x}`, integers, `declare -a` values, prompt strings),
 * warnings where a command parses them again (`eval`, `bash -c`, `source <(…)`, `alias`, …).
 * A placeholder standing in a code place itself is the scanner's to report, except as the value
 * of a variable declared an integer or of a prompt string elsewhere in the command.
 * Linear in the length of the command apart from sorting, and for each nested script level.
 */
export function followShellValues(command: string, placeholders: readonly PlaceholderSpan[], outside: ReadonlyMap<string, Origin> = new Map(), depth = 0): ValueFlow[] {
  const scan = scanShell(command, placeholders);
  const flows: ValueFlow[] = [];
  const tainted = new Taint(scan, outside);

  for (const use of scan.uses) {
    if (use.codePlace === undefined && use.reparsedBy === undefined) continue;
    const origin = tainted.carried(use);
    if (origin === undefined) continue;
    const text = excerpt(command, use.where, use);
    if (use.codePlace !== undefined) flows.push({ severity: 'error', origin, codePlace: use.codePlace, text, scripts: [] });
    else flows.push({ severity: 'warning', origin, reparsedBy: use.reparsedBy, text, scripts: [] });
  }

  // Every value given to an integer or a prompt string is evaluated, wherever it is given.
  for (const assignment of scan.assignments) {
    const codePlace: CodePlace | undefined = scan.integers.has(assignment.name) ? 'declare -i' : promptVariables.has(assignment.name) ? 'a prompt string' : undefined;
    if (codePlace === undefined) continue;
    const text = excerpt(command, assignment.where, assignment.where);
    for (const source of assignment.sources) {
      if (source.codePlace !== undefined) continue; // reported where it stands
      const origin = 'name' in source ? tainted.carried(source) : { path: source.path };
      if (origin !== undefined) flows.push({ severity: 'error', origin, codePlace, text, scripts: [] });
    }
  }

  // Nested shells see the exported variables (and Factory's) in their environment.
  if (depth < maxNestedScripts && scan.nestedScripts.length > 0) {
    const exported = new Map(outside);
    for (const [name, origin] of tainted.origins) if (scan.allExported || scan.exported.has(name)) exported.set(name, origin);
    for (const script of scan.nestedScripts) {
      for (const flow of followShellValues(script.text, [], exported, depth + 1)) flows.push({ ...flow, scripts: [script.by, ...flow.scripts] });
    }
  }
  return flows;
}

/** Which variables hold a placeholder's value, and from where on a check makes one hold only digits. */
class Taint {
  /** The first origin found for each variable that holds a placeholder's value. */
  readonly origins = new Map<string, Origin>();
  /** Where the last assignment that gives each variable a placeholder's value starts. */
  private readonly lastTainted = new Map<string, number>();
  /** Per variable, where checks leave it holding only digits, in order. */
  private readonly checks = new Map<string, number[]>();
  /** Per variable, its reads in values of assignments (in order) and how many were followed. */
  private readonly readsInValues = new Map<string, { reads: Array<{ use: VariableUse; into: Assignment }>; followed: number }>();
  private readonly taintedAssignments = new Set<Assignment>();
  private readonly queue: string[] = [];

  constructor(scan: ShellScan, private readonly outside: ReadonlyMap<string, Origin>) {
    const addCheck = (name: string, at: number) => {
      const list = this.checks.get(name) ?? [];
      list.push(at);
      this.checks.set(name, list);
    };
    for (const check of scan.numberChecks) addCheck(check.name, check.at);
    for (const assignment of scan.assignments) if (assignment.digitsOnly) addCheck(assignment.name, assignment.start);
    for (const list of this.checks.values()) list.sort((a, b) => a - b);

    for (const assignment of scan.assignments) {
      const sources = assignment.readsInput ? [...assignment.sources, ...scan.loopInput] : assignment.sources;
      for (const source of sources) {
        if (!('name' in source)) continue;
        const entry = this.readsInValues.get(source.name) ?? { reads: [], followed: 0 };
        entry.reads.push({ use: source, into: assignment });
        this.readsInValues.set(source.name, entry);
      }
    }
    for (const entry of this.readsInValues.values()) entry.reads.sort((a, b) => a.use.start - b.use.start);

    for (const name of this.readsInValues.keys()) if (this.seed(name) !== undefined) this.queue.push(name);
    for (const assignment of scan.assignments) {
      const sources = assignment.readsInput ? [...assignment.sources, ...scan.loopInput] : assignment.sources;
      const placeholder = sources.find((source) => !('name' in source));
      if (placeholder !== undefined && !('name' in placeholder)) this.taint(assignment, { path: placeholder.path, variable: assignment.name });
    }
    while (this.queue.length > 0) this.follow(this.queue.pop()!);
  }

  /** Where a variable holds run text from before the command: Factory's variables, the caller's. */
  private seed(name: string): Origin | undefined {
    return this.outside.get(name) ?? (name.startsWith('FACTORY_') ? { path: undefined, outside: name, variable: name } : undefined);
  }

  private origin(name: string): Origin | undefined {
    return this.origins.get(name) ?? this.seed(name);
  }

  /** Where the first check after the last tainting assignment of `name` is (Infinity: none). */
  private cleanFrom(name: string): number {
    const last = this.lastTainted.get(name) ?? -1;
    const list = this.checks.get(name);
    if (list === undefined) return Infinity;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (list[middle]! <= last) low = middle + 1;
      else high = middle;
    }
    return list[low] ?? Infinity;
  }

  /** The origin of the value `use` reads, if it holds a placeholder's value there. */
  carried(use: VariableUse): Origin | undefined {
    if (use.digitsOnly) return undefined;
    const origin = this.origin(use.name);
    if (origin === undefined || use.start > this.cleanFrom(use.name)) return undefined;
    return origin;
  }

  private taint(assignment: Assignment, origin: Origin): void {
    if (this.taintedAssignments.has(assignment)) return;
    this.taintedAssignments.add(assignment);
    if (!this.origins.has(assignment.name)) this.origins.set(assignment.name, origin);
    this.lastTainted.set(assignment.name, Math.max(this.lastTainted.get(assignment.name) ?? -1, assignment.start));
    this.queue.push(assignment.name);
  }

  /** Taints the assignments whose values read `name` where it holds a placeholder's value. */
  private follow(name: string): void {
    const entry = this.readsInValues.get(name);
    const origin = this.origin(name);
    if (entry === undefined || origin === undefined) return;
    const cleanFrom = this.cleanFrom(name);
    while (entry.followed < entry.reads.length && entry.reads[entry.followed]!.use.start <= cleanFrom) {
      const { use, into } = entry.reads[entry.followed]!;
      entry.followed += 1;
      if (!use.digitsOnly) this.taint(into, { path: origin.path, outside: origin.outside, variable: into.name, via: origin });
    }
  }
}
