/**
 * The "are you sure" step of an action that cannot be undone or changes content (restore a
 * revision, delete for good, empty the trash): shown in place under what asked, named after it,
 * with the action in words on the Yes button and Cancel beside it. For the keyboard: the focus
 * goes to Cancel when it appears (the button that asked is gone, and a second Enter must not do
 * the deed), Escape cancels, and cancelling gives the focus back to the button that asked
 * (`opener`, its id: it is drawn again once the step is gone).
 */
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../strings/index.js';

export function ItemConfirm(props: { label: string; text: string; yes: string; danger?: boolean; busy: boolean; opener: string; onYes: () => void; onCancel: () => void }) {
  const cancelButton = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelButton.current?.focus(), []);
  const cancel = () => {
    if (props.busy) return;
    props.onCancel();
    // After the re-render that draws the opener again (Preact renders on a microtask).
    setTimeout(() => document.getElementById(props.opener)?.focus(), 0);
  };
  return (
    <div
      class="item-confirm"
      role="group"
      aria-label={props.label}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        event.preventDefault();
        cancel();
      }}
    >
      <p>{props.text}</p>
      <div class="actions">
        <button type="button" class={props.danger ? 'danger' : undefined} disabled={props.busy} onClick={props.onYes}>
          {props.yes}
        </button>
        <button type="button" class="secondary" ref={cancelButton} disabled={props.busy} onClick={cancel}>
          {t.item.cancel}
        </button>
      </div>
    </div>
  );
}
