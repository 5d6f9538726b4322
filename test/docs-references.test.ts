// docs/SECURITY.md and docs/DECISIONS.md name the code and the tests behind each claim. A name that
// no longer exists (a file renamed or split, a test retitled) turns a claim into one nobody can
// check, so this test reads both documents and checks every file, function and test they name.
//
// What the documents may write, and what is checked:
// - A file, as a path from the repository root (`src/engine/sandbox.ts`), a path's tail
//   (`providers/github.ts`, harness/liveness.test.ts), a bare name (`ssh-run.ts`) or a pattern
//   (`providers/*-commands.ts`): some file must match it.
// - A file followed by a function or other name in backticks (`src/http/auth.ts` `secretsEqual`),
//   or a name said to be in it (`secretsEqual` in `src/http/auth.ts`): that name must appear in the file.
// - Test titles, in double quotes after a test file (`test/core/shell-safety.test.ts` "values that
//   variables carry into code", "…"), or after the word test or tests, where they belong to the
//   last test file named before them in the same section. Each title must be in that file; `…`
//   stands for words left out, so the parts around it must appear in that order.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = process.cwd();
const documents = ['docs/SECURITY.md', 'docs/DECISIONS.md'];

/** Every file of the repository that a document could name, as paths from the root. */
function listRepositoryFiles(folder = '', found: string[] = []): string[] {
  for (const name of readdirSync(join(root, folder))) {
    if (name.startsWith('.') || name === 'node_modules' || name.startsWith('dist') || name === 'test-output') continue;
    const path = folder ? `${folder}/${name}` : name;
    if (statSync(join(root, path)).isDirectory()) listRepositoryFiles(path, found);
    else found.push(path);
  }
  return found;
}

export interface Reference {
  /** The file as the document writes it. */
  written: string;
  /** The files it names (none: a broken reference). */
  files: string[];
  /** A function or other name written right after the file, in backticks. */
  symbol?: string;
}

export interface Citation {
  title: string;
  /** The test file it belongs to, as written; undefined when no test file came before it. */
  testFile?: Reference;
}

export interface DocumentReferences {
  references: Reference[];
  citations: Citation[];
}

const pathPattern = /(?<![\w/.@:-])((?:[\w.*-]+\/)*[\w*-][\w.*-]*\.(?:ts|mjs))(?![\w/-])/g;
const quotePattern = /"([^"]+)"|“([^”]+)”/g;
const testWordPattern = /\btests?\b:?/gi;

/** What lies between two parts of a chain of citations: separators and remarks in brackets. */
function isSeparator(text: string): boolean {
  let rest = text;
  for (let previous = ''; previous !== rest; ) {
    previous = rest;
    rest = rest.replace(/\([^()]*\)/g, ' ');
  }
  return /^[\s,;:(]*(?:(?:and|or)\b[\s(]*)?$/.test(rest);
}

/** The files a written path names: a whole path, a path's tail, a bare name or a pattern. */
export function resolvePath(written: string, files: readonly string[]): string[] {
  const source = written.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  const pattern = new RegExp(`(?:^|/)${source}$`);
  return files.filter((file) => pattern.test(file));
}

/**
 * The sections of a Markdown document (split at every heading), each as one line of text: a
 * title that a line break splits is whole again.
 */
function sectionsOf(markdown: string): string[] {
  return markdown
    .split(/^#+ .*$/m)
    .map((section) => section.split('\n').map((line) => line.trim()).join(' '));
}

/** The files, names and test titles a document cites, in the order it writes them. */
export function readReferences(markdown: string, files: readonly string[]): DocumentReferences {
  const references: Reference[] = [];
  const citations: Citation[] = [];
  for (const text of sectionsOf(markdown)) {
    type Mark = { kind: 'path' | 'quote' | 'test-word'; start: number; end: number; text: string };
    const marks: Mark[] = [];
    for (const match of text.matchAll(pathPattern)) marks.push({ kind: 'path', start: match.index!, end: match.index! + match[0].length, text: match[1]! });
    // Quotes inside code (`{"ignored":true}`) are not quotes: they are looked for with code blanked out.
    const prose = text.replace(/`[^`]*`/g, (code) => `\`${' '.repeat(code.length - 2)}\``);
    for (const match of prose.matchAll(quotePattern)) marks.push({ kind: 'quote', start: match.index!, end: match.index! + match[0].length, text: text.slice(match.index! + 1, match.index! + match[0].length - 1) });
    for (const match of text.matchAll(testWordPattern)) marks.push({ kind: 'test-word', start: match.index!, end: match.index! + match[0].length, text: match[0] });
    marks.sort((a, b) => a.start - b.start);
    // A path or test word inside quotes is part of the quote; a test word inside a path, of the path.
    const inside = (mark: Mark, other: Mark) => other !== mark && other.kind !== 'test-word' && other.start <= mark.start && mark.end <= other.end;
    const outside = marks.filter((mark) => mark.kind === 'quote' || !marks.some((other) => inside(mark, other)));

    let lastTestFile: Reference | undefined;
    let chainEnd = -1; // where the chain of citations so far ends; -1: no chain open
    for (const mark of outside) {
      if (mark.kind === 'path') {
        const reference: Reference = { written: mark.text, files: resolvePath(mark.text, files) };
        const after = /^`\s+`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)`/.exec(text.slice(mark.end));
        const before = /`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)` in `$/.exec(text.slice(Math.max(0, mark.start - 120), mark.start));
        if (after ?? before) reference.symbol = (after ?? before)![1];
        references.push(reference);
        if (/\.test\.ts$/.test(mark.text)) {
          lastTestFile = reference;
          chainEnd = mark.end + (text[mark.end] === '`' ? 1 : 0) + (after ? after[0].length - 1 : 0);
        } else if (chainEnd >= 0 && !isSeparator(text.slice(chainEnd, mark.start))) chainEnd = -1;
      } else if (mark.kind === 'test-word') {
        chainEnd = mark.end;
      } else {
        if (chainEnd >= 0 && isSeparator(text.slice(chainEnd, mark.start))) {
          citations.push({ title: mark.text, testFile: lastTestFile });
          chainEnd = mark.end;
        } else chainEnd = -1;
      }
    }
  }
  return { references, citations };
}

/** Where a template literal fills in a value (`${…}`), which a title may quote rendered. */
const filledIn = '\u0001';
/** A value filled in at the end of a template literal: the title may end inside it. */
const filledInLast = '\u0002';

/** Text of a file as a reader would quote it: escapes undone, typographic apostrophes plain, no backticks. */
function plainText(text: string, templates = false): string {
  const filled = templates ? text.replace(/\$\{[^}]*\}(`?)/g, (_, last: string) => (last ? filledInLast : filledIn)) : text;
  return filled.replace(/\\(['"`\\])/g, '$1').replace(/[‘’]/g, "'").replace(/`/g, '');
}

/**
 * Where `part` ends when it is read in `text` from `at`, or -1, with how many of its characters were
 * read as written. A filled-in value in the text stands for up to 40 characters of the part, and for
 * its last ones only at the end of a literal.
 */
function matchEnd(text: string, at: number, part: string, index = 0, literal = 0): { end: number; literal: number } | undefined {
  if (index === part.length) return { end: at, literal };
  if (at >= text.length) return undefined;
  if (text[at] === filledIn || text[at] === filledInLast) {
    const most = Math.min(40, part.length - index - (text[at] === filledIn ? 1 : 0));
    for (let taken = most; taken >= 0; taken--) {
      const found = matchEnd(text, at + 1, part, index + taken, literal);
      if (found) return found;
    }
    return undefined;
  }
  return text[at] === part[index] ? matchEnd(text, at + 1, part, index + 1, literal + 1) : undefined;
}

/** Where `part` is first read in `text` from `from`, with at least 3 of its characters as written. */
function find(text: string, part: string, from: number): { start: number; end: number } | undefined {
  for (let start = from; start < text.length; start++) {
    if (text[start] !== part[0] && text[start] !== filledIn && text[start] !== filledInLast) continue;
    const found = matchEnd(text, start, part);
    if (found && found.literal >= Math.min(3, part.length)) return { start, end: found.end };
  }
  return undefined;
}

/** The string literals of a source file (test titles are among them). */
function stringLiterals(source: string): string[] {
  return [...source.matchAll(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g)].map((match) => match[0]);
}

/**
 * Whether a quoted title is one of a file's strings: the parts around each `…`, in order, within
 * one string literal.
 */
export function titleAppears(title: string, fileText: string): boolean {
  const parts = plainText(title)
    .split(/\(?(?:…|\.\.\.)\)?/)
    .map((part) => part.trim().replace(/^[,:;]|[,:;]$/g, '').trim())
    .filter((part) => part.length > 0);
  if (parts.length === 0) return true;
  return stringLiterals(fileText).some((literal) => {
    const text = plainText(literal, true);
    let at = 0;
    for (const part of parts) {
      const found = find(text, part, at);
      if (!found) return false;
      at = found.end;
    }
    return true;
  });
}

/** Every broken name in one document, each said in words. */
export function findProblems(markdown: string, files: readonly string[], read: (file: string) => string): string[] {
  const problems: string[] = [];
  const { references, citations } = readReferences(markdown, files);
  for (const reference of references) {
    if (reference.files.length === 0) {
      problems.push(`names \`${reference.written}\`, which is no file of the repository`);
    } else if (reference.symbol) {
      const name = reference.symbol.split('.').pop()!;
      const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`);
      if (!reference.files.some((file) => word.test(read(file)))) {
        problems.push(`names \`${reference.symbol}\` in \`${reference.written}\`, which that file does not hold`);
      }
    }
  }
  for (const citation of citations) {
    if (!citation.testFile) {
      problems.push(`quotes the test "${citation.title}" before naming its test file`);
      continue;
    }
    const candidates = citation.testFile.files;
    if (candidates.length === 0) continue; // said above
    if (!candidates.some((file) => titleAppears(citation.title, read(file)))) {
      problems.push(`quotes the test "${citation.title}", which \`${citation.testFile.written}\` does not hold`);
    }
  }
  return problems;
}

const repository = suite('docs references');

repository('every file, name and test title the security and decisions documents cite exists', () => {
  const files = listRepositoryFiles();
  const cache = new Map<string, string>();
  const read = (file: string): string => {
    if (!cache.has(file)) cache.set(file, readFileSync(join(root, file), 'utf8'));
    return cache.get(file)!;
  };
  const problems = documents.flatMap((document) => {
    assert.ok(existsSync(join(root, document)), `${document} is missing`);
    return findProblems(read(document), files, read).map((problem) => `${document} ${problem}`);
  });
  assert.equal(problems, [], `\n${problems.join('\n')}\n`);
});

const reader = suite('docs references: the reader');
const files = ['src/engine/ssh.ts', 'src/engine/ssh-run.ts', 'src/http/auth.ts', 'src/triggers/providers/github-commands.ts', 'test/engine/ssh.test.ts', 'test/http/auth.test.ts'];
const texts: Record<string, string> = {
  'src/http/auth.ts': 'export function secretsEqual(a: string, b: string) {}',
  'test/engine/ssh.test.ts': "ssh('cancel and timeout leave no remote process', async () => {});\nssh('a host key that changed fails in words with strict checking', () => {});",
  'test/http/auth.test.ts': "auth('a token that differs only in its last character is refused', () => {}); auth('the 201st sign-in ends the oldest session, not the newest', () => {});",
};
const read = (file: string) => texts[file] ?? '';

reader('finds whole paths, tails, bare names and patterns, and says which name nothing', () => {
  const problems = findProblems('- `src/engine/ssh.ts`, `ssh-run.ts`, `providers/*-commands.ts`, http/auth.ts; `runs.ts`, `src/engine/gone.ts`', files, read);
  assert.equal(problems, ['names `runs.ts`, which is no file of the repository', 'names `src/engine/gone.ts`, which is no file of the repository']);
});

reader('a name after a file must be in that file', () => {
  assert.equal(findProblems('`src/http/auth.ts` `secretsEqual`', files, read), []);
  assert.equal(findProblems('`src/http/auth.ts` `isAccessToken`', files, read), ['names `isAccessToken` in `src/http/auth.ts`, which that file does not hold']);
  assert.equal(findProblems('(`secretsEqual` in `src/http/auth.ts`)', files, read), []);
  assert.equal(findProblems('(`isAccessToken` in `src/http/auth.ts`)', files, read), ['names `isAccessToken` in `src/http/auth.ts`, which that file does not hold']);
});

reader('a title belongs to the test file before it, across lines, with remarks in brackets between titles', () => {
  const markdown = 'tests `test/http/auth.test.ts` "a token that differs only\n  in its last character is refused" (the spy: `x`), "the 201st sign-in ends the oldest session, not the newest"';
  assert.equal(findProblems(markdown, files, read), []);
  const wrong = 'tests `test/http/auth.test.ts` "a token that differs only in its first character is refused"';
  assert.equal(findProblems(wrong, files, read), ['quotes the test "a token that differs only in its first character is refused", which `test/http/auth.test.ts` does not hold']);
});

reader('titles after the word test belong to the last test file named earlier in the section', () => {
  const markdown = '- one `test/engine/ssh.test.ts`.\n- two: tests "cancel and timeout leave no remote process", "a host key that changed …"\n';
  assert.equal(findProblems(markdown, files, read), []);
  const otherFile = '- one `test/engine/ssh.test.ts`, `test/http/auth.test.ts`.\n- tests "cancel and timeout leave no remote process"';
  assert.equal(findProblems(otherFile, files, read), ['quotes the test "cancel and timeout leave no remote process", which `test/http/auth.test.ts` does not hold']);
  assert.equal(findProblems('## A\n`test/engine/ssh.test.ts`\n## B\nTest "cancel and timeout leave no remote process"', files, read), ['quotes the test "cancel and timeout leave no remote process" before naming its test file']);
});

reader('an ellipsis stands for words left out; the parts around it must come in order', () => {
  assert.ok(titleAppears('a host key … with strict checking', texts['test/engine/ssh.test.ts']!));
  assert.not.ok(titleAppears('with strict checking … a host key', texts['test/engine/ssh.test.ts']!));
  assert.ok(titleAppears('the oldest session, not the newest …', texts['test/http/auth.test.ts']!));
});

reader('a value a template fills in may be quoted as the test shows it', () => {
  const file = "sessions(`the ${maxSessions + 1}st sign-in ends the oldest session, not the newest`, () => {});";
  assert.ok(titleAppears('the 201st sign-in ends the oldest session, not the newest', file));
  assert.not.ok(titleAppears('the 201st sign-in ends the newest session', file));
  assert.not.ok(titleAppears('GitHub answering already exists', 'check(`${name}s`, () => {});'), 'a filled-in value is not the whole title');
  assert.not.ok(titleAppears('a retry … updates that pull request', "pulls('a retry', () => {});\npulls('updates that pull request', () => {});"), 'the parts are in one title');
});

reader('a quote mark inside code starts no quote', () => {
  const markdown = 'the mark `"` opens nothing: `src/engine/gone.ts` is named outside any "quote"';
  assert.equal(findProblems(markdown, files, read), ['names `src/engine/gone.ts`, which is no file of the repository']);
});

reader('quoted words that are not after a test file or the word test are not titles', () => {
  const markdown = 'the sender gets 400 "the provider refused; see the trigger", never the service\'s words; `test/http/auth.test.ts`. A press says "Not allowed".';
  assert.equal(readReferences(markdown, files).citations, []);
});

repository.run();
reader.run();
