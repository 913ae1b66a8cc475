/**
 * Runs a long-lived command (wrangler dev, and the workerd it starts) so that nothing of it
 * outlives us. The npm script is `exec node scripts/start.ts`: without `exec`, npm's sh sits
 * in between, holds back the SIGINT npm forwards and dies of its SIGTERM, leaving us running.
 * A signal to us alone never reached workerd either. So the command gets a process group of
 * its own, and the whole group is stopped when we get SIGINT, SIGTERM or SIGHUP, when our
 * parent goes away (npm killed), when the command exits by itself, and (through a guard
 * process) when we are killed outright.
 */
import { type ChildProcess, type StdioOptions, spawn, spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface SuperviseOptions {
  stdio: StdioOptions;
  env?: NodeJS.ProcessEnv;
  /** How long the group has to stop after SIGTERM before it is killed (default 5 s). */
  graceMs?: number;
  /** How often to look whether our parent is still there (default 500 ms). */
  parentCheckMs?: number;
  /** Called once, before stopping, with what made us stop. */
  onStop?: (reason: string) => void;
}

const GUARD = fileURLToPath(new URL('./group-guard.ts', import.meta.url));

/** Sends a signal to every process of a group; a group already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface Supervised {
  /** The command running now (a new one after each restart). */
  readonly child: ChildProcess;
  /** Stops the group, then exits this process with `code`. */
  stop: (reason: string, code: number) => void;
  /**
   * Stops the group (as stop does, without exiting) and starts the command again with `args`
   * in a new group: what `npm start` does when its config changed. Resolves with the new child.
   */
  restart: (args: readonly string[]) => Promise<ChildProcess>;
}

/** One run of the command: its process, its group and the guard that ends the group with us. */
interface Launched {
  child: ChildProcess;
  pgid: number | undefined;
  guard: ChildProcess | null;
}

/**
 * Starts `command` as the leader of a new process group and ties the group's life to ours.
 * Exits this process (0 after a signal or a lost parent, the command's code when it exits by
 * itself, not when it is restarted).
 */
export function superviseGroup(
  command: string,
  args: readonly string[],
  options: SuperviseOptions,
): Supervised {
  const graceMs = options.graceMs ?? 5_000;
  // Windows has no process groups (and a detached child gets a console of its own):
  // there the tree is ended with taskkill instead.
  const windows = process.platform === 'win32';
  let stopping = false;
  const launch = (args: readonly string[]): Launched => {
    const child = spawn(command, args, {
      detached: !windows,
      stdio: options.stdio,
      env: options.env ?? process.env,
    });
    // No pid: spawn failed, and its 'error' event says why.
    const pgid = child.pid;
    const launched = {
      child,
      pgid,
      guard: pgid === undefined || windows ? null : startGuard(pgid, graceMs),
    };
    child.on('exit', (code, signal) => {
      if (stopping || current !== launched) return;
      stop(`${command} exited (${signal ?? code})`, code ?? 1);
    });
    return launched;
  };
  /** Ends a run's whole group: SIGTERM, SIGKILL after the grace period, and what it left behind. */
  const end = ({ child, pgid, guard }: Launched): Promise<void> => {
    if (pgid === undefined) return Promise.resolve();
    const signalTree = (signal: NodeJS.Signals) =>
      windows
        ? void spawnSync('taskkill', ['/pid', String(pgid), '/T', '/F'])
        : signalGroup(pgid, signal);
    signalTree('SIGTERM');
    const deadline = setTimeout(() => signalTree('SIGKILL'), graceMs);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(deadline);
        // The leader is gone; whatever it left behind (a workerd) goes with it.
        if (!windows) signalGroup(pgid, 'SIGKILL');
        guard?.kill();
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) finish();
      else child.once('exit', finish);
    });
  };

  let current = launch(args);
  const stop = (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    options.onStop?.(reason);
    void end(current).then(() => process.exit(code));
  };
  const restart = async (args: readonly string[]) => {
    const old = current;
    // From here an exit of the old command is the restart's doing, not a reason to stop.
    current = { child: old.child, pgid: undefined, guard: null };
    await end(old);
    if (stopping) return old.child;
    current = launch(args);
    return current.child;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => stop(signal, 0));
  }
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop('parent process gone', 0);
  }, options.parentCheckMs ?? 500).unref();
  return {
    get child() {
      return current.child;
    },
    stop,
    restart,
  };
}

/**
 * A detached process that holds a pipe from us: when the pipe closes (we exited or were
 * killed, even by SIGKILL) it stops the group, so no workerd is left serving.
 */
function startGuard(pgid: number, graceMs: number): ChildProcess {
  const guard = spawn(process.execPath, [GUARD, String(pgid), String(graceMs)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  guard.unref();
  (guard.stdin as Socket | null)?.unref();
  return guard;
}
