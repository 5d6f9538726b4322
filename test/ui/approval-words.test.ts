// How a decision is said on the run page and in the Inbox (ui/views/approval-words.ts): the options
// chosen by their ids, and who decided where.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decidedBy, optionLabels } from '../../ui/views/approval-words';

const words = suite('approval words');

words('who decided, and on which surface', () => {
  assert.is(decidedBy({ name: 'You', via: 'app' }), 'you');
  assert.is(decidedBy({ name: 'Ada Lovelace', via: 'telegram' }), 'Ada Lovelace via Telegram');
  assert.is(decidedBy({ name: '@alice', via: 'github' }), '@alice via GitHub');
  assert.is(decidedBy({ name: 'Grace', via: 'linear' }), 'Grace via Linear');
  assert.is(decidedBy({ name: 'Jo', via: 'jira' }), 'Jo via Jira');
});

words('option ids are 1-based: id "2" is the second label', () => {
  const choices = { mode: 'multiple' as const, options: ['Ship it', 'Polish first', 'Drop it'] };
  assert.equal(optionLabels(choices, ['2']), ['Polish first']);
  assert.equal(optionLabels(choices, ['3', '1']), ['Drop it', 'Ship it']);
  assert.equal(optionLabels(choices, ['7']), ['option 7']);
  assert.equal(optionLabels(undefined, undefined), []);
});

words.run();
