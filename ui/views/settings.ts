// The Settings screen: the webhook server, remote access (with a sign-in link and QR code for
// another device), how many runs go at once, the default harness, the theme; the tracker accounts
// (accounts.ts); the runners (runners.ts); the data folder and the version.
//
// View: one form built once from the snapshot (so typing is never overwritten) and live status
// lines that `update()` re-renders: is the webhook server listening, is remote access running.

import type { RemotePairing, Settings, SettingsInput } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace } from '../dom';
import { accountsPanel } from './accounts';
import { runnersPanel } from './runners';
import { confirmAction, type ConfirmOptions } from './dialog';
import { formValues, watchForm } from './drafts';
import { FormFields, copyText, option, switchControl, withBusy } from './settings-form';

export const settingsScreen: ScreenFactory = (context) => {
  const snapshot = context.state.snapshot;
  if (!snapshot) return { element: h('section', { class: 'page' }, h('h1', {}, 'Settings'), h('p', { class: 'muted' }, 'Loading…')) };
  const settings = snapshot.settings;
  const fields = new FormFields();

  // Webhook server
  // The two switches apply at once (DECISIONS, UI): they are not part of the form's draft.
  const webhookOn = switchControl('Receive trigger webhooks', settings.webhookServer.enabled, { 'data-draft': 'skip' });
  const webhookHost = hostControl(settings.webhookServer.host);
  const webhookPort = portInput(settings.webhookServer.port);
  const webhookStatus = h('p', { class: 'server-status', role: 'status' });

  // Remote access
  const remoteOn = switchControl('Allow remote access (browser and phone)', settings.remoteAccess.enabled, { 'data-draft': 'skip' });
  const remoteHost = hostControl(settings.remoteAccess.host);
  const remotePort = portInput(settings.remoteAccess.port);
  const allowedHosts = h('textarea', { rows: 2, spellcheck: 'false', placeholder: 'factory.example.com' });
  allowedHosts.value = (settings.remoteAccess.allowedHosts ?? []).join('\n');
  const remoteStatus = h('p', { class: 'server-status', role: 'status' });
  const pairingArea = h('div', { class: 'pairing-area' });

  // Runs and appearance
  const maxParallel = h('input', { type: 'number', min: 1, max: 64, step: 1, inputmode: 'numeric', class: 'narrow' });
  maxParallel.value = String(settings.maxParallelRuns);
  const retention = h('input', { type: 'number', min: 0, max: 3650, step: 1, inputmode: 'numeric', class: 'narrow' });
  retention.value = String(settings.worktreeRetentionDays);
  const defaultHarness = h('select');
  const spendLimit = h('input', { type: 'number', min: 0.01, step: 0.01, inputmode: 'decimal', class: 'narrow', placeholder: 'No limit' });
  spendLimit.value = settings.spendLimitUsdPerDay === undefined ? '' : String(settings.spendLimitUsdPerDay);
  const spentToday = h('p', { class: 'meta spent-today', role: 'status' });
  const theme = h('select', {},
    option('system', 'Same as the system', settings.theme ?? 'system'),
    option('light', 'Light', settings.theme),
    option('dark', 'Dark', settings.theme));

  function fillHarnesses(): void {
    const current = defaultHarness.value || context.state.snapshot?.settings.defaultHarnessId || '';
    const harnesses = context.state.snapshot?.harnesses ?? [];
    replace(defaultHarness, option('', 'None: each pipeline chooses', current), harnesses.map((harness) => option(harness.id, harness.enabled ? harness.name : `${harness.name} (disabled)`, current)));
  }
  fillHarnesses();

  const save = h('button', { type: 'submit', class: 'primary' }, 'Save settings');
  const unsaved = h('span', { class: 'meta unsaved-note', role: 'status', 'data-test': 'settings-unsaved' });
  const form = h('form', { class: 'settings-form', novalidate: true, 'aria-label': 'Settings' },
    h('section', { class: 'panel', 'aria-labelledby': 'settings-webhook' },
      h('h2', { id: 'settings-webhook' }, 'Webhook server'),
      h('p', { class: 'meta' }, 'Receives the webhooks of your triggers at /hooks/<trigger id>.'),
      webhookOn.element,
      h('div', { class: 'form-grid' },
        fields.field('webhookServer.host', 'Listen address', webhookHost.element, '127.0.0.1: this machine only. 0.0.0.0: the network.'),
        fields.field('webhookServer.port', 'Port', webhookPort)),
      webhookStatus),
    h('section', { class: 'panel', 'aria-labelledby': 'settings-remote' },
      h('h2', { id: 'settings-remote' }, 'Remote access'),
      h('p', { class: 'meta' }, 'Use Factory from a browser or your phone, signed in with a link.'),
      remoteOn.element,
      h('div', { class: 'form-grid' },
        fields.field('remoteAccess.host', 'Listen address', remoteHost.element, '127.0.0.1: this machine only. 0.0.0.0: the network.'),
        fields.field('remoteAccess.port', 'Port', remotePort)),
      fields.field('remoteAccess.allowedHosts', 'Allowed host names, one per line', allowedHosts, 'Extra names this server answers to, such as a tunnel’s address. Optional.'),
      remoteStatus,
      pairingArea),
    h('section', { class: 'panel', 'aria-labelledby': 'settings-runs' },
      h('h2', { id: 'settings-runs' }, 'Runs and appearance'),
      h('div', { class: 'form-grid' },
        fields.field('maxParallelRuns', 'Runs at the same time', maxParallel, 'From 1 to 64; more wait in the queue.'),
        fields.field('worktreeRetentionDays', 'Keep worktrees of finished runs (days)', retention, 'Then the folder goes and its work stays on the run’s branch. 0: until the run is deleted.'),
        fields.field('defaultHarnessId', 'Default harness', defaultHarness, 'For agent steps that name none.'),
        fields.field('spendLimitUsdPerDay', 'Agents may spend per day ($)', spendLimit, 'All runs together, by calendar day. At the limit agent steps pause and wait for you. Empty: no limit.'),
        fields.field('theme', 'Theme', theme)),
      spentToday),
    fields.general,
    h('div', { class: 'form-actions settings-actions' }, save, unsaved));
  fields.register('webhookServer', webhookOn.input);
  fields.register('remoteAccess', remoteOn.input);

  const about = h('section', { class: 'panel about', 'aria-labelledby': 'settings-about' },
    h('h2', { id: 'settings-about' }, 'About'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Data folder'), h('dd', {}, h('div', { class: 'input-row' }, h('code', {}, snapshot.dataDir), context.desktop ? openFolderButton(context, snapshot.dataDir) : null)),
      h('dt', {}, 'Version'), h('dd', {}, snapshot.version)));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    try {
      const saved = await withBusy(save, 'Saving…', () => context.api.saveSettings(read()));
      if (context.state.snapshot) context.state.snapshot.settings = saved;
      applyTheme(saved.theme);
      markSaved();
      context.toast('Settings saved');
      renderStatus();
    } catch (error) {
      fields.showError(error);
    }
  });

  function read(): SettingsInput {
    const input: SettingsInput = {
      webhookServer: { enabled: webhookOn.input.checked, host: webhookHost.value(), port: Number(webhookPort.value) },
      remoteAccess: {
        enabled: remoteOn.input.checked, host: remoteHost.value(), port: Number(remotePort.value),
        allowedHosts: allowedHosts.value.split(/[\s,]+/).map((host) => host.trim()).filter(Boolean),
      },
      maxParallelRuns: Number(maxParallel.value),
      worktreeRetentionDays: Number(retention.value),
      theme: theme.value as Settings['theme'],
      spendLimitUsdPerDay: spendLimit.value.trim() === '' ? null : Number(spendLimit.value),
    };
    if (defaultHarness.value) input.defaultHarnessId = defaultHarness.value;
    return input;
  }

  function renderStatus(): void {
    const current = context.state.snapshot;
    if (!current) return;
    if (current.webhookUrl) serverState(webhookStatus, 'ok', `✓ Listening at ${current.webhookUrl}`);
    else if (current.webhookError) serverState(webhookStatus, 'error', `✕ ${current.webhookError}`);
    else if (current.settings.webhookServer.enabled) serverState(webhookStatus, 'muted', '◔ Starting…');
    else serverState(webhookStatus, 'muted', '○ Off: triggers cannot receive webhooks.');

    const remote = current.remote;
    if (remote.running) serverState(remoteStatus, 'ok', `✓ Running${remote.url ? ` at ${remote.url}` : ''}`);
    else if (remote.error) serverState(remoteStatus, 'error', `✕ ${remote.error}`);
    else if (remote.enabled) serverState(remoteStatus, 'muted', '◔ Starting…');
    else serverState(remoteStatus, 'muted', '○ Off');
    pairing.render(remote.running);
    spentToday.textContent = spentTodayLine(current.spentTodayUsd ?? 0, current.settings.spendLimitUsdPerDay);
  }

  const pairing = pairingSection(context, pairingArea);
  renderStatus();
  const accounts = accountsPanel(context);
  const runners = runnersPanel(context);

  // What is typed stays a draft until saved (drafts.ts); the bar with Save sticks to the bottom and says so.
  const draft = watchForm(form);
  const labelled = [...form.querySelectorAll<HTMLLabelElement>('label.form-field')].map((field) => ({ name: field.firstElementChild!.textContent!, field, saved: formValues(field) }));
  const showUnsaved = () => {
    const dirty = draft.isDirty();
    // Which fields, by their labels: the bar says what Save would change.
    const changed = labelled.filter((entry) => formValues(entry.field) !== entry.saved).map((entry) => entry.name);
    unsaved.textContent = dirty ? `Unsaved: ${changed.length ? changed.join(', ') : 'changes'}` : '';
    form.classList.toggle('has-unsaved', dirty);
  };
  const markSaved = () => {
    draft.saved();
    for (const entry of labelled) entry.saved = formValues(entry.field);
    showUnsaved();
  };
  form.addEventListener('input', showUnsaved);
  form.addEventListener('change', showUnsaved);
  applyAtOnce(context, webhookOn.input, (enabled) => ({ webhookServer: { enabled } }),
    (enabled) => (enabled ? 'Webhook server switched on' : 'Webhook server switched off: triggers receive no webhooks'), renderStatus);
  applyAtOnce(context, remoteOn.input, (enabled) => ({ remoteAccess: { enabled } }),
    (enabled) => (enabled ? 'Remote access switched on' : 'Remote access switched off'), renderStatus,
    // From a browser, switching it off ends this very connection: only the desktop can switch it on again.
    context.desktop ? undefined : { title: 'Switch off remote access?', body: 'This page reaches Factory through it: it is signed out, and only the desktop app can switch remote access on again.', confirm: 'Switch off', danger: true });
  // An address such as #/settings?section=accounts opens at that part (the getting-started checklist links there).
  const section = new URLSearchParams(location.hash.split('?')[1] ?? '').get('section');
  if (section) requestAnimationFrame(() => document.getElementById(`settings-${section}`)?.closest('section')?.scrollIntoView({ block: 'start' }));

  return {
    element: h('section', { class: 'page settings-page' }, h('h1', {}, 'Settings'), form, accounts.element, runners.element, about),
    update() {
      fillHarnesses();
      renderStatus();
      accounts.update();
      runners.update();
    },
  };
};

/**
 * A switch that applies when flipped: saves just its part of the settings, says so in a toast,
 * and flips back with the reason when the save is refused. With `ask`, switching off asks first.
 */
function applyAtOnce(context: AppContext, input: HTMLInputElement, patch: (on: boolean) => SettingsInput, words: (on: boolean) => string,
  applied: () => void, ask?: ConfirmOptions): void {
  input.addEventListener('change', async () => {
    const on = input.checked;
    if (!on && ask && !await confirmAction(ask)) {
      input.checked = true;
      return;
    }
    input.disabled = true;
    try {
      const saved = await context.api.saveSettings(patch(on));
      if (context.state.snapshot) context.state.snapshot.settings = saved;
      context.toast(words(on));
      applied();
    } catch (error) {
      input.checked = !on;
      context.toast(errorText(error), 'error');
    } finally {
      input.disabled = false;
    }
  });
}

/** The listen address: a choice of the two usual ones, or any other address typed in. */
function hostControl(host: string): { element: HTMLElement; value(): string } {
  const known = ['127.0.0.1', '0.0.0.0'];
  const select = h('select', {},
    option('127.0.0.1', '127.0.0.1 (this machine only)', host),
    option('0.0.0.0', '0.0.0.0 (the network)', host),
    option('other', 'Another address…', known.includes(host) ? undefined : 'other'));
  const other = h('input', { type: 'text', spellcheck: 'false', 'aria-label': 'Other listen address', placeholder: '192.168.1.20', class: 'narrow' });
  if (!known.includes(host)) {
    select.value = 'other';
    other.value = host;
  }
  other.hidden = select.value !== 'other';
  select.addEventListener('change', () => {
    other.hidden = select.value !== 'other';
    if (!other.hidden) other.focus();
  });
  return {
    element: h('div', { class: 'input-row' }, select, other),
    value: () => (select.value === 'other' ? other.value.trim() : select.value),
  };
}

/** Desktop only: reveals the data folder in the file manager. */
function openFolderButton(context: AppContext, path: string): HTMLButtonElement {
  const button = h('button', { type: 'button' }, 'Show in folder');
  button.addEventListener('click', async () => {
    try {
      await withBusy(button, 'Opening…', () => context.api.openPath(path));
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });
  return button;
}

function portInput(port: number): HTMLInputElement {
  const input = h('input', { type: 'number', min: 1, max: 65535, step: 1, inputmode: 'numeric', class: 'narrow' });
  input.value = String(port);
  return input;
}

function serverState(element: HTMLElement, kind: 'ok' | 'error' | 'muted', text: string): void {
  element.className = `server-status server-${kind}`;
  element.textContent = text;
}

function applyTheme(theme: Settings['theme']): void {
  if (!theme || theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/**
 * The sign-in link and its QR code. The desktop shows the access token's link (remotePairing),
 * with Reset token; a browser asks for a one-time link instead (POST /api/pairing-invite: once,
 * within 10 minutes), since the access token must not reach a page. A link to this machine only
 * says how to reach it from a phone.
 */
function pairingSection(context: AppContext, area: HTMLElement): { render(running: boolean): void } {
  let shownFor: boolean | undefined;
  let loading = false;

  async function createInvite(): Promise<{ url: string; qrSvg: string }> {
    const response = await fetch('/api/pairing-invite', { method: 'POST', credentials: 'same-origin' });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error ?? `The sign-in link could not be made (HTTP ${response.status})`);
    return body;
  }

  async function load(): Promise<void> {
    loading = true;
    replace(area, h('p', { class: 'meta' }, 'Making the sign-in link…'));
    try {
      show(context.desktop ? await context.api.remotePairing() : await createInvite());
    } catch (error) {
      const retry = h('button', { type: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load());
      replace(area, h('p', { class: 'field-error' }, `✕ ${errorText(error)}`), retry);
    } finally {
      loading = false;
    }
  }

  function show(pairing: Pick<RemotePairing, 'url' | 'qrSvg'>): void {
    const copy = h('button', { type: 'button' }, 'Copy link');
    copy.addEventListener('click', async () => {
      const copied = await copyText(pairing.url);
      context.toast(copied ? 'Sign-in link copied' : 'Could not copy: select the link and copy it by hand', copied ? 'ok' : 'error');
    });
    const again = h('button', { type: 'button', class: context.desktop ? 'danger' : '' }, context.desktop ? 'Reset token' : 'New link');
    again.addEventListener('click', async () => {
      if (!context.desktop) return void load();
      if (!await confirmAction({ title: 'Reset the access token?', body: 'Every signed-in browser and phone is signed out and needs the new link.', confirm: 'Reset token', danger: true })) return;
      try {
        await withBusy(again, 'Resetting…', () => context.api.resetRemoteToken());
        context.toast('Token reset: every device is signed out');
        await load();
      } catch (error) {
        context.toast(errorText(error), 'error');
      }
    });
    const local = /^(localhost|127\.|\[::1\]$)/.test(new URL(pairing.url).hostname);
    replace(area,
      h('h3', {}, 'Sign in another device'),
      h('div', { class: 'pairing-row' },
        qrCode(pairing.qrSvg),
        h('div', { class: 'pairing-text' },
          h('p', { class: 'meta' }, context.desktop
            ? 'Scan the code with your phone, or open the link in a browser. Anyone with the link can use Factory: share it with no one.'
            : 'Scan the code with your phone, or open the link on another device. It signs in once, within 10 minutes: share it with no one.'),
          h('code', { class: 'url', tabindex: '0', 'data-test': 'pairing-url' }, pairing.url),
          local ? h('p', { class: 'meta warning', 'data-test': 'pairing-local' }, 'This link works on this machine only. For a phone on your network, choose 0.0.0.0 as the listen address above and save: then anyone on the network who has a link can sign in. Through a tunnel, add its host name to the allowed host names.') : null,
          h('div', { class: 'form-actions' }, copy, again))));
  }

  return {
    render(running) {
      if (shownFor === running || loading) return;
      shownFor = running;
      if (!running) replace(area, h('p', { class: 'meta' }, 'Switch on remote access to get a sign-in link and QR code.'));
      else if (context.desktop) void load();
      else replace(area, h('h3', {}, 'Sign in another device'),
        h('p', { class: 'meta' }, 'A link and QR code that sign a phone or another browser in once, within 10 minutes.'),
        h('button', { type: 'button', 'data-test': 'create-invite', onclick: () => void load() }, 'Create a sign-in link'));
    },
  };
}

/**
 * The QR code SVG from `remotePairing()`. It is made by our own encoder and holds only <svg>,
 * <rect> and <path>; still, it is parsed as XML (never as HTML), its root must be an <svg>, and
 * any other element or any script-like attribute refuses it.
 */
function qrCode(svgText: string): HTMLElement {
  const container = h('div', { class: 'qr', role: 'img', 'aria-label': 'QR code of the sign-in link' });
  const parsed = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const root = parsed.documentElement;
  const allowed = new Set(['svg', 'rect', 'path']);
  const safe = root.localName === 'svg' && root.namespaceURI === 'http://www.w3.org/2000/svg'
    && [root, ...root.querySelectorAll('*')].every((node) => allowed.has(node.localName) && ![...node.attributes].some((attribute) => /^on|href$/i.test(attribute.name)));
  if (safe) container.appendChild(document.importNode(root, true));
  else container.textContent = 'The QR code could not be shown: use the link.';
  return container;
}

/** `Today: $1.24 of $5.00`, or `Today: $1.24 (no daily limit)`: what agents spent today against the limit. */
function spentTodayLine(spent: number, limit: number | undefined): string {
  return limit === undefined ? `Today: $${spent.toFixed(2)} (no daily limit)` : `Today: $${spent.toFixed(2)} of $${limit.toFixed(2)}`;
}
