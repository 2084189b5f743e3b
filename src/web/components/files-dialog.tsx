/**
 * A modal dialog of the file browser: the native <dialog> opened with showModal(), so the rest
 * of the page is inert (Tab stays inside) and Escape closes it; the focus goes to its first
 * control on opening and back where it was on closing.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../strings/index.js';

let made = 0;

export function FilesDialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useRef(`files-dialog-${(made += 1)}`);
  useEffect(() => {
    const element = dialog.current;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
    element?.showModal();
    element?.querySelector<HTMLElement>('input, select, button:not(.files-dialog-close), a[href]')?.focus();
    return () => {
      element?.close();
      if (before?.isConnected) before.focus();
    };
  }, []);
  return (
    <dialog
      ref={dialog}
      class="files-dialog"
      aria-labelledby={id.current}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <div class="files-dialog-head">
        <h2 id={id.current}>{title}</h2>
        <button type="button" class="secondary files-dialog-close" onClick={onClose}>
          {t.files.close}
        </button>
      </div>
      {children}
    </dialog>
  );
}
