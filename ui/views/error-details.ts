// Errors in words first, the raw details behind a disclosure (UI.md). The engine's network errors
// are one string: the words ("Couldn't reach Jira at 127.0.0.1:45413 (connection refused)"), then
// a line `Details: <method> <redacted URL>: <exact error>` (src/net/http.ts NetworkError; ui/ sees
// only types, so the separator is repeated here). Any other error is all words.

import { h } from '../dom';

const detailsSeparator = '\nDetails: ';

/** The words and the details of an error's text ('' when it has none). */
function splitError(text: string): { words: string; details: string } {
  const at = text.indexOf(detailsSeparator);
  return at < 0 ? { words: text, details: '' } : { words: text.slice(0, at), details: text.slice(at + detailsSeparator.length) };
}

/** The words alone, where only a line fits (a list row, a toast). */
export function errorWords(text: string): string {
  return splitError(text).words;
}

/**
 * An element saying an error: `prefix` and the words, then a closed "Details" disclosure with the
 * raw text (wrapping anywhere: a 400-character URL never widens the page). `shorten` cuts the
 * words where space is short (the Inbox's preview); the details stay whole.
 */
export function errorElement(text: string, className: string, prefix = '', shorten = (words: string) => words): HTMLElement {
  const { words, details } = splitError(text);
  return h('span', { class: `${className} error-text` }, `${prefix}${shorten(words)}`,
    details ? h('details', { class: 'error-details' }, h('summary', {}, 'Details'), h('code', { 'data-test': 'error-details' }, details)) : null);
}
