/**
 * A labelled input with its hint and error beside it: the error is tied to the input
 * (aria-describedby, aria-invalid) so a screen reader reads it with the field.
 */
import type { JSX } from 'preact';

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onInput'>;

export function Field(props: InputProps & { id: string; label: string; value: string; onValue: (value: string) => void; error?: string | undefined; hint?: string }) {
  const { id, label, value, onValue, error, hint, ...rest } = props;
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <input
        {...rest}
        id={id}
        value={value}
        onInput={(event) => onValue((event.currentTarget as HTMLInputElement).value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {error && (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** An error about the whole form (not one field), announced when it appears. */
export function FormError({ text }: { text: string | undefined }) {
  return (
    <div role="alert" class="form-error">
      {text}
    </div>
  );
}
