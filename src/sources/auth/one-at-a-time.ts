/**
 * Runs async work one piece at a time, in the order asked: each waits for the one before it
 * to settle (whether it worked or not). An OAuth 2.0 poller's renewals go through one per
 * object (R17), so that a renewal of one wiring never overlaps one of the next.
 */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  /** `work`, once every piece asked for before it has settled. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
