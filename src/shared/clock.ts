/** Time source port: services take a Clock so tests can fix and move time. */
export interface Clock {
  /** Current time. */
  now(): Date;
}

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved; for tests. */
export class FixedClock implements Clock {
  private current: number;
  constructor(start: Date | string = "2026-01-15T10:00:00.000Z") {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.current += ms;
  }
  /** Sets the time. */
  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }
}
