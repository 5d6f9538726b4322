// Small DOM helpers. Text always goes in through textContent: nothing from an issue, a webhook,
// an agent or a log is ever parsed as HTML.

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/**
 * Makes an element: `h('button', { class: 'primary', onclick: save }, 'Save')`. Attributes with
 * a function value become listeners (`onclick` → click); `true` sets an empty attribute, `false`,
 * null and undefined leave it out. Children that are strings or numbers become text nodes.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Node, ...children: (Child | Child[])[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** "3 min ago", "in 2 h", "just now"; the exact time goes in a title attribute. */
export function relativeTime(at: number, now = Date.now()): string {
  const seconds = Math.round((now - at) / 1000);
  const future = seconds < 0;
  const value = Math.abs(seconds);
  let text: string;
  if (value < 10) return 'just now';
  if (value < 60) text = `${value} s`;
  else if (value < 3600) text = `${Math.round(value / 60)} min`;
  else if (value < 86400) text = `${Math.round(value / 3600)} h`;
  else text = `${Math.round(value / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

/** A <time> element showing relative time, with the exact time on hover. */
export function timeElement(at: number | undefined): HTMLElement {
  if (!at) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: new Date(at).toISOString(), title: new Date(at).toLocaleString(), 'data-at': at }, relativeTime(at));
}

export function duration(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}
