/**
 * The deadlines of a pool's exchanges (core/transport.ts `poolFor`), one timer for all. Pure of
 * sockets: the pool calls `expire` of each exchange past its wall-clock deadline.
 */
/** How often a pool looks for exchanges past their deadline: one timer for all, not one each. */
const SWEEP_MS = 20;

/**
 * The deadlines of a pool's exchanges in flight, swept every SWEEP_MS (a timeout is judged at most
 * that much after its deadline: never earlier). Each sweep first lets one turn of the event loop
 * read what has arrived, as `send` does.
 */
export class Deadlines {
  private readonly due = new Map<() => void, number>();
  private timer: NodeJS.Timeout | undefined;
  add(atMs: number, expire: () => void): void {
    this.due.set(expire, atMs);
    this.timer ??= setInterval(() => setImmediate(() => this.sweep()), SWEEP_MS);
  }
  remove(expire: () => void): void {
    this.due.delete(expire);
  }
  private sweep(): void {
    const now = performance.now();
    for (const [expire, at] of this.due) if (at <= now) expire();
    if (this.due.size === 0) this.stop();
  }
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
