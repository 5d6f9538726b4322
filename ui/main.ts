// The renderer's entry. In a browser it talks to remote access over HTTP; the full interface
// arrives with the renderer issue. Until then it shows whether this browser is signed in.
import type { Snapshot } from '../src/core/api';

async function start(): Promise<void> {
  const root = document.getElementById('app')!;
  const heading = document.createElement('h1');
  const text = document.createElement('p');
  root.replaceChildren(heading, text);
  try {
    const response = await fetch('/api/call/snapshot', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    if (response.status === 401) {
      heading.textContent = 'Sign in to Factory';
      text.textContent = 'Open the sign-in link or scan the QR code on the desktop.';
      return;
    }
    const body = (await response.json()) as { result?: Snapshot; error?: string };
    if (!body.result) throw new Error(body.error ?? `HTTP ${response.status}`);
    heading.textContent = `Factory ${body.result.version}`;
    text.textContent = `Signed in. ${body.result.pipelines.length} pipelines, ${body.result.runs.length} recent runs.`;
  } catch (error) {
    heading.textContent = 'Factory cannot be reached';
    text.textContent = error instanceof Error ? error.message : String(error);
  }
}

void start();
