/** What an ended incarnation's run gets when it tries to send anything more. */
export class ErasedError extends Error {
  override name = 'ErasedError';
  constructor() {
    super('the poller was deleted: a run of its earlier incarnation sends nothing more');
  }
}

/**
 * One life of a poller's object, from its start (or its last erase) to its next erase
 * (R14). Everything built for a life (its stores, its wiring: the source's requests and the
 * deliveries) keeps a reference to it, so a run that started before an erase finds it ended:
 * its storage writes are refused (its fence fails) and nothing more leaves the object, no
 * page request and no delivery. The object ends a life synchronously, before its first await,
 * so nothing is sent after DELETE has answered.
 */
export class Incarnation {
  private ended = false;

  get live(): boolean {
    return !this.ended;
  }

  end(): void {
    this.ended = true;
  }

  /** Throws when this life has ended: called right before anything leaves the object. */
  readonly check = (): void => {
    if (this.ended) throw new ErasedError();
  };
}
