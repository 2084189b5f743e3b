/**
 * `items.map(work)` for asynchronous work, one item after the other: what a listing that looks
 * up a record per row (a name, an avatar, an access) does. In order, not all at once, so the
 * queries of one operation reach the storage layer as they did when they were synchronous, and a
 * transaction's handle is never asked for two statements at the same time.
 */
export async function mapInOrder<T, U>(items: readonly T[], work: (item: T, index: number) => Promise<U>): Promise<U[]> {
  const out: U[] = [];
  for (const [index, item] of items.entries()) out.push(await work(item, index));
  return out;
}

/** `items.flatMap(work)` for asynchronous work, in order (mapInOrder). */
export async function flatMapInOrder<T, U>(items: readonly T[], work: (item: T, index: number) => Promise<readonly U[]>): Promise<U[]> {
  return (await mapInOrder(items, work)).flat() as U[];
}

/** `items.filter(test)` for an asynchronous test, in order (mapInOrder). */
export async function filterInOrder<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await test(item)) kept.push(item);
  return kept;
}
