// The poller's storage: the engine's port with every table's owner beside it. Owns no table.
import { type AuditEntry, AuditLog } from './audit-log.ts';
import { ChildProgressTable } from './child-progress.ts';
import { DeadLetters } from './dead-letters.ts';
import { DeletionsStream } from './deletions-stream.ts';
import { DeliveryFailures } from './delivery-failures.ts';
import { type Counters, History } from './history.ts';
import { StoreHost } from './host.ts';
import { IdMemory } from './id-memory.ts';
import { Ledger } from './ledger.ts';
import { ObjectMeta } from './meta.ts';
import { NextPaths } from './next-paths.ts';
import { OAuthTokens } from './oauth-tokens.ts';
import { PollerStateStore } from './port.ts';
import { Presence } from './presence.ts';
import { Reconciliation } from './reconciliation.ts';
import { ResumeRound } from './resume-round.ts';

export { AUDIT_LIMIT, type AuditEntry } from './audit-log.ts';
export { StoredValueError } from './checked.ts';
export {
  DEAD_LETTER_CAP,
  DEAD_LETTER_CAP_PRUNED_TO,
  DEAD_LETTER_PRUNE_BATCH,
  DEAD_LETTER_PRUNE_EVERY_MS,
  type StoredDeadLetter,
} from './dead-letters.ts';
export { type Counters, HISTORY_LIMIT } from './history.ts';
export { BOUNDARY_MAX_CHARS } from './ledger.ts';
export type { StoredRuntimeConfig } from './meta.ts';
export type { PathSighting } from './next-paths.ts';
export type { LastReport } from './presence.ts';

/** The tables of a poller's storage that grow with its work. */
export const TABLES = ['ledger', 'runs', 'delivery_failures', 'dead_letters', 'audit_log'] as const;

/** Rows and approximate bytes (the stored text plus a fixed estimate per row) of each table. */
export type TableSizes = Record<(typeof TABLES)[number], { rows: number; bytes: number }>;

/**
 * A poller's storage, as its object uses it: the engine's port (PollerStore, over
 * `poller_state`) with every other table's owner beside it, all on one SQL host that meters
 * their writes and refuses them once the object's life ended (R14). Owns no table itself.
 */
export class SqliteStore extends PollerStateStore {
  /** `meta`: the poller's name, a runtime config, incarnations, registration. */
  readonly meta: ObjectMeta;
  /** `audit_log`. */
  readonly audit: AuditLog;
  /** `dead_letters`, their bounds and pruning. */
  readonly deadLetters: DeadLetters;
  /** `runs`, the run counters and the idle run. */
  readonly history: History;
  /** `ledger` and its boundary. */
  readonly ledger: Ledger;
  /** When the poller was first seen, and what it last told the registry. */
  readonly presence: Presence;
  /** `id_memory`: what was last delivered of each id (changes_only, reconcile). */
  readonly ids: IdMemory;
  /** `deletions_stream` and `deletions_ledger` (source.deletions). */
  readonly deletionsStream: DeletionsStream;
  /** `resume_round` (source.resume): the round's token and page cursor. */
  readonly rounds: ResumeRound;
  /** `child_progress` (source.children): the child listing in progress. */
  readonly childProgress: ChildProgressTable;
  /** `reconcile_state`, `reconcile_listing` and `reconcile_pending` (reconcile). */
  readonly reconciliation: Reconciliation;
  /** `oauth_tokens` (source.auth = oauth2), sealed by poller/token-vault.ts. */
  readonly oauth: OAuthTokens;
  /** Which next-page body paths the pages had (in `meta`): a misspelt one is warned of. */
  readonly nextPaths: NextPaths;

  constructor(
    storage: DurableObjectStorage,
    /** The object's life this store was made for (see StoreHost). */
    life: { readonly live: boolean } = { live: true },
  ) {
    const host = new StoreHost(storage, life);
    const audit = new AuditLog(host);
    const ledger = new Ledger(host);
    const deadLetters = new DeadLetters(host, audit);
    const history = new History(host);
    const failures = new DeliveryFailures(host);
    const ids = new IdMemory(host);
    // Fenced through the port, which exists only once super() returns.
    const rounds = new ResumeRound(host, (epoch, write) => this.fenced(epoch, write), audit);
    super(host, { ledger, rounds, ids, failures, deadLetters, history });
    this.rounds = rounds;
    this.ids = ids;
    this.deletionsStream = new DeletionsStream(host, (epoch, write) => this.fenced(epoch, write));
    this.reconciliation = new Reconciliation(host, (epoch, write) => this.fenced(epoch, write));
    this.childProgress = new ChildProgressTable(
      host,
      (epoch, write) => this.fenced(epoch, write),
      ids,
      audit,
    );
    this.oauth = new OAuthTokens(host);
    this.meta = new ObjectMeta(host);
    this.nextPaths = new NextPaths(this.meta);
    this.audit = audit;
    this.deadLetters = deadLetters;
    this.history = history;
    this.ledger = ledger;
    this.presence = new Presence(host);
  }

  /** How long dead letters are kept: the poller's dead_letter_retention. */
  get deadLetterRetention(): number {
    return this.deadLetters.retention;
  }

  set deadLetterRetention(ms: number) {
    this.deadLetters.retention = ms;
  }

  /** Writes an audit entry (see AuditLog). */
  appendAudit(entry: AuditEntry): void {
    this.audit.append(entry);
  }

  /** The newest audit entries first. */
  auditLog(limit: number): AuditEntry[] {
    return this.audit.list(limit);
  }

  counters(): Counters {
    return this.history.counters();
  }

  /**
   * Rows and approximate bytes of each table, from the counters kept on every write; the run
   * history, capped at HISTORY_LIMIT rows, is measured (a bounded read).
   */
  tableSizes(): TableSizes {
    const state = this.host.row();
    return {
      ledger: { rows: state.ledger_rows, bytes: state.ledger_bytes },
      runs: this.history.size(),
      delivery_failures: { rows: state.failure_rows, bytes: state.failure_bytes },
      dead_letters: { rows: state.dead_letter_rows, bytes: state.dead_letter_bytes },
      audit_log: { rows: state.audit_rows, bytes: state.audit_bytes },
    };
  }

  /** The whole database's size in bytes, as the platform counts it. */
  databaseBytes(): number {
    return this.host.databaseBytes();
  }

  /**
   * Just after an erase, in the fresh tables: the tombstone of the incarnation erased, and
   * the epoch it had reached, so the next incarnation's first run takes the one after (R14).
   */
  markErased(incarnation: number, epoch: number): void {
    this.host.transaction(() => {
      this.meta.markErased(incarnation);
      this.continueEpochs(epoch);
    });
  }

  /** Counts the rows another writer to this database writes (its freshness store). */
  countRowsOf(writer: { readonly rowsWritten: number }): void {
    this.host.countRowsOf(writer);
  }

  /** Counts a set or delete of the alarm, which Cloudflare bills as a row written. */
  countAlarmWrite(): void {
    this.host.countAlarmWrite();
  }

  /** Rows and alarm writes of this object so far: the persisted counters and the pending. */
  writeCounts(): { rows: number; alarms: number } {
    return this.host.writeCounts();
  }

  /** Writes now what waits in memory to be written with the next write (StoreHost.defer). */
  flush(): void {
    this.host.flush();
  }

  /** The storage was changed outside this store (deleteAll, a test's SQL): nothing read holds. */
  forget(): void {
    this.host.forget();
  }
}
