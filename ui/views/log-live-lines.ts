// Live lines of the setup log, which come without numbers, matched with a read of the log's tail:
// which of them the read already holds (log-view.ts drops those).

import type { LogLine } from '../../src/core/api';

/**
 * The live lines without numbers (the setup log's) that a fresh read does not already hold. A line
 * is written to disk before its `logs` event goes out (about 80 ms later), and an event may even
 * arrive after a read that holds all of it: the first live lines after a read may repeat lines of
 * the read, after a marker for lines the feed skipped. `live` is the live lines since the read, in
 * order. Lines are matched by their text and stream (a line on disk has its block's time).
 */
export function linesAfter(read: readonly LogLine[], live: readonly LogLine[]): LogLine[] {
  const same = (a: LogLine, b: LogLine) => a.line === b.line && a.stream === b.stream;
  /** Whether live[liveEnd] is read[readEnd], the lines before them agreeing back to the start of either or to a marker. */
  const agree = (liveEnd: number, readEnd: number) => {
    let back = 0;
    while (back <= liveEnd && back <= readEnd && same(live[liveEnd - back]!, read[readEnd - back]!)) back++;
    return back > 0 && (back > liveEnd || back > readEnd || Boolean(live[liveEnd - back]!.skipped));
  };
  // The read's last line in `live`: the lines after it are new.
  for (let end = 0; end < live.length && read.length > 0; end++) if (agree(end, read.length - 1)) return live.slice(end + 1);
  // The last live line in the read: nothing is new yet.
  for (let end = read.length - 1; end >= 0 && live.length > 0; end--) if (agree(live.length - 1, end)) return [];
  return live.slice();
}
