/** Minimal typed event: `on` returns an unsubscribe function; listeners run synchronously. */
export class Emitter<A extends unknown[] = []> {
  #listeners = new Set<(...args: A) => void>();

  on(listener: (...args: A) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves with the next emission's arguments. */
  once(): Promise<A> {
    return new Promise((resolve) => {
      const off = this.on((...args) => {
        off();
        resolve(args);
      });
    });
  }

  emit(...args: A): void {
    for (const l of this.#listeners) l(...args);
  }

  clear(): void {
    this.#listeners.clear();
  }
}
