/**
 * What an action over several entries could not do (the file list's and the trash's selection
 * toolbars): one line per entry, its name and why, under the summary the page shows.
 */
import { t } from '../strings/index.js';

export interface BulkFailure {
  name: string;
  why: string;
}

export function BulkFailures({ failures }: { failures: readonly BulkFailure[] }) {
  if (failures.length === 0) return null;
  return (
    <div class="error files-failures" role="alert">
      <p>{t.bulk.failures}</p>
      <ul>
        {failures.map((f) => (
          <li key={f.name}>{t.bulk.failedItem(f.name, f.why)}</li>
        ))}
      </ul>
    </div>
  );
}
