/**
 * The "are you sure" step of an action that cannot be undone or changes content (restore a
 * revision, delete for good, empty the trash): shown in place under what asked, named after it,
 * with the action in words on the Yes button and Cancel beside it.
 */
import { t } from '../strings.js';

export function ItemConfirm(props: { label: string; text: string; yes: string; danger?: boolean; busy: boolean; onYes: () => void; onCancel: () => void }) {
  return (
    <div class="item-confirm" role="group" aria-label={props.label}>
      <p>{props.text}</p>
      <div class="actions">
        <button type="button" class={props.danger ? 'danger' : undefined} disabled={props.busy} onClick={props.onYes}>
          {props.yes}
        </button>
        <button type="button" class="secondary" disabled={props.busy} onClick={props.onCancel}>
          {t.item.cancel}
        </button>
      </div>
    </div>
  );
}
