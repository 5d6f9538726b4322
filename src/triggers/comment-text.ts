// The run comment as each tracker reads it. Write-back builds a comment as a small document whose
// parts are either Factory's own words or text from outside (an issue's title through a
// placeholder, a step's output, an agent's words, a pipeline or step name); each tracker's renderer
// writes outside text so that the tracker shows it as inert text:
//
// - GitHub and Linear Markdown: in a code span or a fenced code block whose fence is longer than
//   any backtick run inside, so it can never close early. Markdown, HTML (an `<img>`, a
//   `<!-- comment -->`) and links are literal there, and GitHub's mention, team mention, issue
//   reference and autolink filters skip text inside `code` and `pre` (html-pipeline's
//   IGNORE_PARENTS), so `@octocat` notifies nobody.
// - Jira Cloud (ADF): text nodes with the `code` mark, or a `codeBlock`: never a `mention`, an
//   `inlineCard` or a link mark made from outside text.
// - Jira Data Center wiki markup: blocks in `{noformat}` with every `{noformat` inside broken by a
//   zero-width space, so the block cannot be closed from inside; inline text with every markup
//   character backslash-escaped (`\[~admin\]` is no mention, `\[login|…\]` no link, `\!img\!` no
//   image) and URL schemes broken by a zero-width space (`https:\u200B//…` is not autolinked).
//
// The first line of every comment is Factory's: `Factory · run <run id> …`. A comment is the
// run's only when it begins so (`isRunComment`): outside text can never come first, so a marker
// quoted in an issue, an output or another run's comment never matches.

/** Factory's own words, bold words, an identifier Factory made, its own link, or outside text. */
export type CommentInline =
  | { kind: 'words'; text: string }
  | { kind: 'strong'; text: string }
  | { kind: 'id'; text: string }
  | { kind: 'link'; text: string; url: string }
  | { kind: 'outside'; text: string };

/** A paragraph of inline parts, or a block of outside text shown as it is (a step's output). */
export type CommentBlock = { kind: 'paragraph'; parts: CommentInline[] } | { kind: 'output'; text: string };

/** A run's comment: its run id (the first line names it) and what follows. */
export interface CommentDocument {
  runId: string;
  /** Inline parts after `Factory · run <id>` on the first line. */
  header: CommentInline[];
  blocks: CommentBlock[];
}

const zeroWidthSpace = '\u200B';

/**
 * Outside text without what could change how the text around it reads: control characters (but
 * tabs and line ends), bidirectional overrides and isolates; `\r\n` and `\r` become `\n`.
 */
function cleanOutsideText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, '');
}

/** Inline outside text on one line: every run of white space is one space. */
function oneLine(text: string): string {
  return cleanOutsideText(text).replace(/\s+/g, ' ').trim();
}

function longestRun(text: string, character: string): number {
  let longest = 0;
  let current = 0;
  for (const each of text) {
    current = each === character ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return longest;
}

/** The blocks of a comment, its first line `Factory · run <id> …` first. */
function withFirstLine(comment: CommentDocument): CommentBlock[] {
  const first: CommentInline[] = [{ kind: 'strong', text: 'Factory' }, { kind: 'words', text: ' · run ' }, { kind: 'id', text: comment.runId }, ...comment.header];
  return [{ kind: 'paragraph', parts: first }, ...comment.blocks];
}

/** A run id as the marker's pattern needs it: a Factory id has only these characters. */
function checkedId(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new RangeError(`A comment's id must be letters, digits, _ or -, not ${JSON.stringify(id)}`);
  return id;
}

/**
 * True when a comment's text (Markdown, wiki markup, or the plain text of an ADF body) is the
 * comment of run `runId`: it begins with `Factory`, `run` and the id, whatever markup is around
 * them. Outside text never comes first in a comment Factory writes.
 */
export function isRunComment(text: string, runId: string): boolean {
  return new RegExp(`^[^\\p{L}\\p{N}]*Factory[^\\p{L}\\p{N}]+run[^\\p{L}\\p{N}]+${checkedId(runId)}(?![\\w-])`, 'u').test(text);
}

// ─── GitHub and Linear: Markdown ───

/** Outside text as a code span: the fence is one backtick longer than any run inside, padded with spaces. */
function markdownCodeSpan(text: string): string {
  const inner = oneLine(text);
  if (!inner) return '';
  const fence = '`'.repeat(longestRun(inner, '`') + 1);
  return `${fence} ${inner} ${fence}`;
}

/** Factory's own words with Markdown's markup characters escaped (CommonMark escapes any ASCII punctuation). */
function markdownWords(text: string): string {
  return text.replace(/[\\`*_[\]<>!~|]/g, '\\$&');
}

function markdownInline(part: CommentInline): string {
  switch (part.kind) {
    case 'words':
      return markdownWords(part.text);
    case 'strong':
      return `**${markdownWords(part.text)}**`;
    case 'id':
      return markdownCodeSpan(checkedId(part.text));
    case 'link':
      return `[${markdownWords(part.text)}](${part.url.replace(/[\s()<>]/g, encodeURIComponent)})`;
    case 'outside':
      return markdownCodeSpan(part.text);
  }
}

/** The comment in Markdown (GitHub, Linear): paragraphs apart by a blank line, outputs as fenced code. */
export function commentMarkdown(comment: CommentDocument): string {
  const blocks = withFirstLine(comment).map((block) => {
    if (block.kind === 'paragraph') return block.parts.map(markdownInline).join('');
    const text = cleanOutsideText(block.text);
    const fence = '`'.repeat(Math.max(3, longestRun(text, '`') + 1));
    return `${fence}\n${text}\n${fence}`;
  });
  return blocks.join('\n\n');
}

// ─── Jira Cloud: Atlassian Document Format ───

type AdfNode = Record<string, unknown>;

function adfInline(part: CommentInline): AdfNode | undefined {
  const text = part.kind === 'outside' ? oneLine(part.text) : part.text;
  if (!text) return undefined; // ADF refuses an empty text node
  switch (part.kind) {
    case 'words':
      return { type: 'text', text };
    case 'strong':
      return { type: 'text', text, marks: [{ type: 'strong' }] };
    case 'id':
      return { type: 'text', text: checkedId(text), marks: [{ type: 'code' }] };
    case 'outside':
      return { type: 'text', text, marks: [{ type: 'code' }] };
    case 'link':
      return { type: 'text', text, marks: [{ type: 'link', attrs: { href: part.url } }] };
  }
}

/** The comment as an ADF document (Jira Cloud): paragraphs of text nodes, outputs as code blocks. */
export function commentAdf(comment: CommentDocument): AdfNode {
  const content = withFirstLine(comment).map((block): AdfNode => {
    if (block.kind === 'paragraph') return { type: 'paragraph', content: block.parts.map(adfInline).filter((node): node is AdfNode => node !== undefined) };
    const text = cleanOutsideText(block.text);
    return { type: 'codeBlock', content: text ? [{ type: 'text', text }] : [] };
  });
  return { type: 'doc', version: 1, content };
}

// ─── Jira Data Center: wiki markup ───

/**
 * Text that wiki markup shows as it is: every character the notation gives a meaning to is
 * backslash-escaped, and URL schemes are broken so the renderer does not make links of them.
 */
function wikiText(text: string): string {
  return text
    .replace(/\b([A-Za-z][A-Za-z0-9+.-]*:)(?=\/\/)|\b(mailto:)/gi, `$1$2${zeroWidthSpace}`)
    .replace(/[\\*_?\-+^~{}[\]|!#]/g, '\\$&');
}

function wikiInline(part: CommentInline): string {
  switch (part.kind) {
    case 'words':
      return wikiText(part.text);
    case 'strong':
      return `*${wikiText(part.text)}*`;
    case 'id':
      return `{{${checkedId(part.text)}}}`;
    case 'link':
      return `[${wikiText(part.text)}|${part.url.replace(/[\s|\]]/g, encodeURIComponent)}]`;
    case 'outside':
      return wikiText(oneLine(part.text));
  }
}

/** A block shown as it is: no `{noformat` inside survives to close it early. */
function wikiNoformat(text: string): string {
  return `{noformat}\n${cleanOutsideText(text).replace(/\{(?=\s*noformat)/gi, `{${zeroWidthSpace}`)}\n{noformat}`;
}

/** The comment in Jira wiki markup (Jira Data Center and Server). */
export function commentWikiMarkup(comment: CommentDocument): string {
  return withFirstLine(comment)
    .map((block) => (block.kind === 'paragraph' ? block.parts.map(wikiInline).join('') : wikiNoformat(block.text)))
    .join('\n\n');
}
