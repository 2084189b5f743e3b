/**
 * Work queued per key: `run(key, work)` starts `work` once every earlier work of the same key
 * has settled (resolved or failed), and works of different keys run side by side. What the
 * bridge serialises per node or destination name, and the blob backends per hash, within one
 * process. Keys with nothing queued hold no memory.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with work queued or running (tests). */
  get size(): number {
    return this.tails.size;
  }
}
