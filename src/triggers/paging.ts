// Paging through a service's listings: the one loop every provider reads pages with (a poll's
// issues, the comments searched for a run's comment, a pull request's reviews). Each provider keeps
// its own cursor (a URL from GitHub's `Link` header, Linear's `endCursor`, Jira Cloud's
// `nextPageToken`, Jira Data Center's `startAt`); the loop keeps the trail of cursors asked for,
// so a service that sends the same page again, or pages without end, cannot keep a listing going.

import { ProviderError } from './provider';

/** Items asked for per page, in every listing (the most GitHub, Linear and Jira give at once). */
export const pageSize = 100;

/**
 * Pages one listing reads at most: 100 pages of 100 issues. A trigger matching more than 10,000
 * issues would start as many runs, so it is a filter mistake or a service that pages without end;
 * either way the listing stops with an error instead of asking forever (DECISIONS "Triggers").
 */
export const maxPagesPerPoll = 100;

/** One listing: where it starts, how a page is asked for, and how the cursor after it is read. */
export interface Listing<Page> {
  /** The service's name in errors: `GitHub`. */
  service: string;
  /** The issue whose comments are listed (a search for a run's comment); absent: a poll's listing. */
  commentsOn?: string;
  /** The first page's cursor. */
  first: string;
  /** Asks for the page at `cursor` (`index` 0 is the first page). */
  read(cursor: string, index: number): Promise<Page>;
  /** The cursor of the page after `page`, or undefined on the last page. */
  next(page: Page, cursor: string): string | undefined;
}

/**
 * The pages of `listing`, in order. The next cursor is read only once the caller took the page
 * (a page is used before a next link that is refused stops the listing), and the caller's `break`
 * asks for nothing more. A cursor asked for before (the service does not advance) or a page past
 * `maxPagesPerPoll` (it does not end) throws ProviderError before anything is asked, so every
 * listing ends; the first is retryable (the next poll or write-back may find the service well).
 */
export async function* pages<Page>(listing: Listing<Page>): AsyncGenerator<Page, void, undefined> {
  const { service, commentsOn } = listing;
  const asked = new Set<string>();
  for (let cursor: string | undefined = listing.first; cursor !== undefined;) {
    if (asked.has(cursor)) {
      throw new ProviderError(commentsOn === undefined
        ? `${service} sent the same next page again after ${asked.size} pages, so the poll stopped there; it will try again at the next poll`
        : `${service} sent the same page of the comments on ${commentsOn} again after ${asked.size} pages, so Factory stopped looking for the run's comment; the write-back will try again`, true);
    }
    if (asked.size >= maxPagesPerPoll) {
      const most = (maxPagesPerPoll * pageSize).toLocaleString('en-US');
      throw new ProviderError(commentsOn === undefined
        ? `${service} kept sending more pages: the poll stopped after ${maxPagesPerPoll} pages (${most} issues). Narrow the trigger's filter if it really matches that many issues`
        : `${service} kept sending more pages of the comments on ${commentsOn}: Factory stopped looking for the run's comment after ${maxPagesPerPoll} pages (${most} comments) and wrote none, rather than risk a second one`);
    }
    asked.add(cursor);
    const page = await listing.read(cursor, asked.size - 1);
    yield page;
    cursor = listing.next(page, cursor);
  }
}
