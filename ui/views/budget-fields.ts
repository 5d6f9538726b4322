// The budget fields of the Pipeline editor (issue 24.6): the caps of an agent step, or of a whole
// run, as three number fields in the style of the others. Empty means no cap; what the engine
// refuses (negative, not a number) comes back at its field.

import type { Budget } from '../../src/core/api';
import { h } from '../dom';
import { field } from './form';

/** `whose` says in the hints whether the caps are one step's (all its attempts) or the run's (all agent steps). */
export function budgetFields(budget: Budget | undefined, whose: 'step' | 'run'): { element: HTMLElement; read(): Budget | undefined } {
  const input = (value: number | undefined, step: string, placeholder: string) => {
    const control = h('input', { type: 'number', inputmode: 'decimal', min: '0', step, placeholder });
    control.value = value === undefined ? '' : String(value);
    return control;
  };
  const cost = input(budget?.maxCostUsd, '0.01', 'No cap');
  const tokens = input(budget?.maxTokens, '1000', 'No cap');
  const minutes = input(budget?.maxMinutes, '1', 'No cap');
  const scope = whose === 'run' ? 'All agent steps of a run together.' : 'All attempts of this step together.';
  const element = h('div', { class: 'field-grid budget-fields', 'data-field': 'budget' },
    field('Budget: cost ($)', cost, { field: 'budget.maxCostUsd', hint: `${scope} At the cap the agent stops and waits for you.` }),
    field('Budget: tokens', tokens, { field: 'budget.maxTokens' }),
    field('Budget: minutes', minutes, { field: 'budget.maxMinutes' }));
  return {
    element,
    read() {
      const read: Budget = {};
      for (const [key, control] of [['maxCostUsd', cost], ['maxTokens', tokens], ['maxMinutes', minutes]] as const) {
        if (control.value.trim() !== '') read[key] = Number(control.value);
      }
      return Object.keys(read).length > 0 ? read : undefined;
    },
  };
}
