// Templates: `{{ path }}` placeholders (DESIGN §4).

/** One `{{ path }}` in a template: the trimmed path and where the placeholder stands. */
export interface Placeholder {
  path: string;
  start: number;
  end: number;
}

const placeholderPattern = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Every placeholder of `template`, in order. */
export function listPlaceholders(template: string): Placeholder[] {
  const found: Placeholder[] = [];
  for (const match of template.matchAll(placeholderPattern)) {
    found.push({ path: match[1]!, start: match.index!, end: match.index! + match[0].length });
  }
  return found;
}
