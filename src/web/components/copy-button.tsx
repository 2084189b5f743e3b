/**
 * A Copy button for a value shown beside it: the clipboard API where the page is a secure
 * context (HTTPS, or loopback), else the older copy command on a hidden text field (plain HTTP
 * on a LAN). "Copied" is announced through a live region next to the button.
 */
import { useState } from 'preact/hooks';
import { t } from '../strings/index.js';

async function copyText(text: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission): the copy command below may still work.
    }
  }
  const field = document.createElement('textarea');
  field.value = text;
  field.setAttribute('readonly', '');
  field.className = 'offscreen';
  document.body.append(field);
  field.select();
  try {
    return document.execCommand('copy');
  } finally {
    field.remove();
  }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <span class="copy">
      <button type="button" aria-label={label} onClick={async () => setState((await copyText(text)) ? 'copied' : 'failed')}>
        {t.copy}
      </button>
      <span role="status" class="copy-status">
        {state === 'copied' ? t.copied : state === 'failed' ? t.copyFailed : ''}
      </span>
    </span>
  );
}

/** A value to copy: shown as code, with its Copy button. */
export function CopyValue({ text, label }: { text: string; label: string }) {
  return (
    <div class="copy-value">
      <code>{text}</code>
      <CopyButton text={text} label={label} />
    </div>
  );
}

/** A block of text to copy (a configuration file's lines). */
export function CopyBlock({ text, label }: { text: string; label: string }) {
  return (
    <div class="copy-block">
      <pre>
        <code>{text}</code>
      </pre>
      <CopyButton text={text} label={label} />
    </div>
  );
}
