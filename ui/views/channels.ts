// The Channels screen: where Factory sends word of finished runs, waiting approvals and trigger
// errors (Slack, Discord, ntfy, Telegram, a webhook, desktop notifications).
//
// View: the list (one delegated click listener) and the editor of the chosen channel. Tokens are
// never shown: a saved one is only announced ("a token is saved"), and an empty field keeps it.

import type { ChannelEvent, ChannelInput, ChannelKind, ChannelView } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace } from '../dom';
import { confirmAction } from './dialog';
import { DraftShelf } from './drafts';
import { checkbox } from './form';
import { FormFields, option, resultLine, switchControl, withBusy } from './settings-form';

const kinds: { kind: ChannelKind; name: string }[] = [
  { kind: 'slack', name: 'Slack' },
  { kind: 'discord', name: 'Discord' },
  { kind: 'ntfy', name: 'ntfy' },
  { kind: 'telegram', name: 'Telegram' },
  { kind: 'webhook', name: 'Webhook' },
  { kind: 'desktop', name: 'Desktop notification' },
];
const kindName = (kind: string): string => kinds.find((entry) => entry.kind === kind)?.name ?? kind;

const events: { event: ChannelEvent; label: string }[] = [
  { event: 'run.succeeded', label: 'A run succeeded' },
  { event: 'run.failed', label: 'A run failed' },
  { event: 'run.waiting', label: 'A run waits for approval' },
  { event: 'trigger.error', label: 'A trigger failed' },
];

export const channelsScreen: ScreenFactory = (context) => {
  let selected: string | undefined;
  const newButton = h('button', { type: 'button', class: 'primary' }, 'New channel');
  const list = h('ul', { class: 'list channel-list', 'aria-label': 'Channels' });
  const listArea = h('div', { class: 'split-list' });
  const editorArea = h('div', { class: 'split-detail' });
  const element = h('section', { class: 'page channels-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Channels'), h('span', { class: 'spacer' }), newButton),
    h('p', { class: 'muted intro' }, 'Channels tell you when a run finishes, waits for your approval, or a trigger fails. Everything also lands in the Inbox.'),
    h('div', { class: 'split' }, listArea, editorArea));

  function channels(): ChannelView[] {
    return context.state.snapshot?.channels ?? [];
  }

  // The editor shown, and those left with unsaved changes per channel ('new' too), shown again when opened (drafts.ts).
  const shelf = new DraftShelf<{ element: HTMLElement; focus(): void }>();

  /** Opens a channel, a new one ('new'), or nothing; `keep` (the person switched): the editor left keeps its draft. */
  function open(id: string | undefined, keep = false): void {
    selected = id;
    const channel = channels().find((candidate) => candidate.id === id);
    const shown = shelf.open(id, keep, () => channelEditor(context, channel, (savedId) => open(savedId)), () => open(id));
    if (!shown) replace(editorArea, channels().length ? h('div', { class: 'empty' }, 'Choose a channel to edit it.') : null);
    else {
      replace(editorArea, shown.editor.element);
      if (!shown.kept && !channel) shown.editor.focus();
    }
    render();
  }

  newButton.addEventListener('click', () => open('new', true));
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item) open(item.dataset.id!, true);
  });

  function render(): void {
    const all = channels();
    if (all.length === 0) {
      const start = h('button', { type: 'button', class: 'primary' }, 'Add a channel');
      start.addEventListener('click', () => open('new'));
      replace(listArea, h('div', { class: 'empty' }, h('p', {}, 'No channels yet. Add one to hear about runs on Slack, your phone (ntfy, Telegram) or the desktop.'), start));
      return;
    }
    const pipelines = context.state.snapshot?.pipelines ?? [];
    replace(list, all.map((channel) => {
      const scope = channel.pipelineIds?.length
        ? channel.pipelineIds.map((id) => pipelines.find((pipeline) => pipeline.id === id)?.name ?? id).join(', ')
        : 'all pipelines';
      return h('li', { class: 'list-item' },
        h('button', { type: 'button', class: 'item-button', 'data-id': channel.id, ...(channel.id === selected ? { 'aria-current': 'true' } : {}) },
          h('span', { class: 'item-title' }, channel.name, channel.enabled ? null : h('span', { class: 'tag' }, 'off'),
            shelf.has(channel.id) ? h('span', { class: 'tag tag-draft' }, 'unsaved') : null),
          h('span', { class: 'meta item-meta' }, `${kindName(channel.kind)} · ${channel.events.length ? channel.events.join(', ') : 'no events'} · ${scope}`)));
    }));
    if (list.parentNode !== listArea) replace(listArea, list);
  }

  open(channels()[0]?.id);
  return {
    element,
    update() {
      if (selected && selected !== 'new' && !channels().some((channel) => channel.id === selected)) open(channels()[0]?.id);
      else render();
    },
  };
};

/** The form of one channel; a new one when `channel` is undefined. `done` gets the id to show next. */
function channelEditor(context: AppContext, channel: ChannelView | undefined, done: (id: string | undefined) => void): { element: HTMLElement; focus(): void } {
  const fields = new FormFields();
  const kind = h('select', {}, kinds.map((entry) => option(entry.kind, entry.name, channel?.kind ?? 'slack')));
  const name = h('input', { type: 'text', required: true, autocomplete: 'off' });
  const url = h('input', { type: 'url', spellcheck: 'false', autocomplete: 'off', class: 'mono' });
  const token = h('input', { type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  const chatId = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: '-1001234567890 or @channel' });
  const enabled = switchControl('Enabled', channel?.enabled ?? true);
  const approvals = switchControl('Approve and reject with buttons on approval notices', channel?.approvals ?? false);
  const approvers = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: '123456789, @ada' });
  approvers.value = (channel?.approvers ?? []).join(', ');
  const eventBoxes = events.map((entry) => {
    const input = h('input', { type: 'checkbox', value: entry.event });
    input.checked = channel ? channel.events.includes(entry.event) : entry.event !== 'run.succeeded';
    return { input, element: h('label', { class: 'check' }, input, h('span', {}, entry.label), h('code', { class: 'meta' }, entry.event)) };
  });
  const pipelines = context.state.snapshot?.pipelines ?? [];
  // Checkboxes, not a multi-select: one tap each, on a phone too.
  const pipelineBoxes = pipelines.map((pipeline) => checkbox(pipeline.name, channel?.pipelineIds?.includes(pipeline.id) ?? false, { value: pipeline.id }));
  name.value = channel?.name ?? '';
  url.value = channel?.url ?? '';
  chatId.value = channel?.chatId ?? '';

  const urlField = fields.field('url', 'URL', url);
  const urlLabel = urlField.querySelector('span')!;
  const urlHint = h('small', { class: 'meta' });
  urlField.insertBefore(urlHint, url.nextSibling);
  const tokenField = fields.field('token', 'Token', token);
  const tokenHint = h('small', { class: 'meta' });
  tokenField.insertBefore(tokenHint, token.nextSibling);
  const chatField = fields.field('chatId', 'Chat id', chatId, 'The chat, group or @channel the bot writes to.');
  const approversField = fields.field('approvers', 'Approvers', approvers, 'Telegram user ids or @usernames who may press Approve/Reject. Presses by anyone else are refused.');
  const approvalsStatus = h('p', { class: 'field-error', role: 'status', hidden: !channel?.approvalsError }, channel?.approvalsError ?? '');
  const approvalsGroup = fields.group('approvals', 'Approvals from Telegram', [approvals.element, approversField, approvalsStatus],
    'Factory reads the presses itself (long polling): no public address is needed, but the bot must have no webhook.');

  /** Shows the fields the chosen kind needs, with its own words. */
  function showKind(): void {
    const current = kind.value as ChannelKind;
    urlField.hidden = current === 'desktop';
    tokenField.hidden = current !== 'ntfy' && current !== 'telegram';
    chatField.hidden = current !== 'telegram';
    approvalsGroup.hidden = current !== 'telegram';
    approversField.hidden = !approvals.input.checked;
    const urlWords: Record<string, [string, string, string]> = {
      slack: ['Webhook URL', 'https://hooks.slack.com/services/…', 'An incoming webhook of your Slack app.'],
      discord: ['Webhook URL', 'https://discord.com/api/webhooks/…', 'Channel settings → Integrations → Webhooks.'],
      ntfy: ['Server and topic', 'https://ntfy.sh/my-topic', 'The ntfy server followed by your topic.'],
      telegram: ['API base URL (optional)', 'https://api.telegram.org', 'Leave empty for api.telegram.org.'],
      webhook: ['URL', 'https://example.com/factory', 'Factory POSTs a JSON message to it.'],
    };
    const words = urlWords[current];
    if (words) {
      urlLabel.textContent = words[0];
      url.placeholder = words[1];
      urlHint.textContent = words[2];
    }
    tokenField.querySelector('span')!.textContent = current === 'telegram' ? 'Bot token' : 'Access token (optional)';
    const saved = channel?.hasToken && channel.kind === current;
    token.placeholder = saved ? '•••••••• saved' : current === 'telegram' ? 'from @BotFather' : '';
    tokenHint.textContent = saved ? 'A token is saved; leave empty to keep it.' : current === 'telegram' ? 'The token @BotFather gave your bot.' : 'Only for a protected topic.';
  }
  kind.addEventListener('change', showKind);
  approvals.input.addEventListener('change', showKind);
  showKind();

  function input(): ChannelInput {
    const current = kind.value as ChannelKind;
    const result: ChannelInput = {
      kind: current,
      name: name.value.trim(),
      enabled: enabled.input.checked,
      events: eventBoxes.filter((box) => box.input.checked).map((box) => box.input.value as ChannelEvent),
      pipelineIds: pipelineBoxes.filter((box) => box.input.checked).map((box) => box.input.value),
    };
    if (channel) result.id = channel.id;
    if (current !== 'desktop' && url.value.trim()) result.url = url.value.trim();
    if ((current === 'ntfy' || current === 'telegram') && token.value.trim()) result.token = token.value.trim();
    if (current === 'telegram') {
      result.chatId = chatId.value.trim();
      result.approvals = approvals.input.checked;
      result.approvers = approvers.value.split(/[\s,]+/).filter(Boolean);
    }
    return result;
  }

  const save = h('button', { type: 'submit', class: 'primary' }, channel ? 'Save' : 'Create channel');
  const test = h('button', { type: 'button' }, 'Send a test');
  const testOutput = h('p', { class: 'test-result', role: 'status', hidden: true });
  const actions = h('div', { class: 'form-actions' }, save, test);
  if (channel) {
    const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
    remove.addEventListener('click', async () => {
      if (!await confirmAction({ title: `Delete the channel “${channel.name}”?`, body: 'It stops sending notices.', confirm: 'Delete', danger: true })) return;
      try {
        await withBusy(remove, 'Deleting…', () => context.api.deleteChannel(channel.id));
        const snapshot = context.state.snapshot;
        if (snapshot) snapshot.channels = snapshot.channels.filter((candidate) => candidate.id !== channel.id);
        context.toast(`Channel “${channel.name}” deleted`);
        done(snapshot?.channels[0]?.id);
      } catch (error) {
        context.toast(errorText(error), 'error');
      }
    });
    actions.append(h('span', { class: 'spacer' }), remove);
  } else {
    const cancel = h('button', { type: 'button' }, 'Cancel');
    cancel.addEventListener('click', () => done(context.state.snapshot?.channels[0]?.id));
    actions.append(cancel);
  }

  test.addEventListener('click', async () => {
    fields.clear();
    testOutput.hidden = true;
    try {
      const result = await withBusy(test, 'Sending…', () => context.api.testChannel(input()));
      resultLine(testOutput, result.ok, result.ok ? 'Sent: check that it arrived.' : result.error ?? 'Not sent');
    } catch (error) {
      if (!fields.showError(error)) resultLine(testOutput, false, errorText(error));
    }
  });

  const title = channel ? channel.name : 'New channel';
  const form = h('form', { class: 'panel editor', novalidate: true, 'aria-label': title },
    h('h2', { class: 'editor-title' }, title),
    h('div', { class: 'form-grid' }, fields.field('kind', 'Kind', kind), fields.field('name', 'Name', name)),
    urlField, tokenField, chatField, approvalsGroup,
    fields.group('events', 'Send when', eventBoxes.map((box) => box.element)),
    pipelines.length
      ? fields.group('pipelineIds', 'Only for these pipelines', h('div', { class: 'check-list', 'data-test': 'channel-pipelines' }, pipelineBoxes.map((box) => box.element)), 'None ticked: all pipelines.')
      : null,
    enabled.element,
    fields.general,
    actions,
    testOutput);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    try {
      const saved = await withBusy(save, 'Saving…', () => context.api.saveChannel(input()));
      const snapshot = context.state.snapshot;
      if (snapshot) {
        snapshot.channels = snapshot.channels.some((candidate) => candidate.id === saved.id)
          ? snapshot.channels.map((candidate) => (candidate.id === saved.id ? saved : candidate))
          : [...snapshot.channels, saved];
      }
      context.toast(`Channel “${saved.name}” saved`);
      done(saved.id);
    } catch (error) {
      fields.showError(error);
    }
  });
  return { element: form, focus: () => kind.focus() };
}
