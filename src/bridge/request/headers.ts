/**
 * The one reader of request headers for verbs and upload doors. Node hands a header over as a
 * string, or as an array when it came more than once (only for the few it does not join
 * itself); a repeated header is read as one list, its values joined as RFC 9110 §5.3 joins them.
 */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
