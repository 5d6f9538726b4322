// Approval commands in an issue's comments (issue 26): a comment whose first line is
// `<prefix>approve`, `<prefix>approve 2`, `<prefix>approve 1,3` or `<prefix>reject` decides the
// waiting approval of the run; the rest of the comment is the approval's comment. This file
// only reads the text: who may decide, and what the run makes of it, is approval-commands.ts.
//
// The reading is linear in the comment's length and bounded: a comment of a megabyte, or a command
// with ten thousand ids, is refused with a reason that says the limit, never half-taken.

/** Option ids one command may name (an approval with more options than this is not a real one). */
export const maxCommandIds = 100;
/** The comment an approval keeps: RunService.approveStep takes up to this many characters. */
const maxCommandComment = 10_000;
/** The prefix when the trigger names none: `/approve`, `/reject`. */
export const defaultCommandPrefix = '/';

type CommandReading =
  /** Not a command: an ordinary comment. */
  | { kind: 'none' }
  /** A command to take: `selected` are option ids as written (approveStep keeps the known ones). */
  | { kind: 'command'; approved: boolean; selected: string[]; comment: string; line: string }
  /** A command that cannot be taken as written; `reason` says why, in words for the issue. */
  | { kind: 'refused'; line: string; reason: string };

/** The command line as shown back in a notice or the ledger: at most 60 characters. */
function shownLine(line: string): string {
  return line.length <= 60 ? line : `${line.slice(0, 59)}…`;
}

/**
 * Reads a comment's text (Markdown, wiki markup or the plain text of an ADF body). The first line
 * that is not blank must be `<prefix>approve` or `<prefix>reject` (any letter case), alone or
 * followed by white space; after `approve` come option ids (digits, apart by commas or spaces), and
 * whatever follows them on the line, then the next lines, is the comment.
 */
export function readCommand(body: string, prefix: string = defaultCommandPrefix): CommandReading {
  const text = body.trimStart();
  if (!text.startsWith(prefix)) return { kind: 'none' };
  const end = text.indexOf('\n');
  const firstLine = (end < 0 ? text : text.slice(0, end)).replace(/\r$/, '');
  const word = /^(approve|reject)(?=\s|$)/i.exec(firstLine.slice(prefix.length));
  if (!word) return { kind: 'none' };
  const approved = word[1]!.toLowerCase() === 'approve';
  const line = shownLine(firstLine.trim());
  const after = firstLine.slice(prefix.length + word[0].length);
  let from = 0;
  const selected: string[] = [];
  if (approved) {
    // Leading ids, one at a time: a command of 10,000 ids stops at the 101st.
    const id = /[\s,]*(\d{1,9})(?=[\s,]|$)/y;
    for (let found = id.exec(after); found; found = id.exec(after)) {
      if (selected.length === maxCommandIds) {
        return { kind: 'refused', line, reason: `it names more than ${maxCommandIds} option ids; name at most ${maxCommandIds}` };
      }
      selected.push(String(Number(found[1])));
      from = id.lastIndex;
    }
  }
  const rest = after.slice(from).replace(/^[\s,]+/, '');
  const following = end < 0 ? '' : text.slice(end + 1);
  const comment = `${rest.trim()}\n${following}`.replace(/\r\n?/g, '\n').trim();
  if (comment.length > maxCommandComment) {
    return { kind: 'refused', line, reason: `its comment has ${comment.length.toLocaleString('en-US')} characters; an approval keeps at most ${maxCommandComment.toLocaleString('en-US')}` };
  }
  return { kind: 'command', approved, selected, comment, line };
}
