import type { DesiredPoller } from './fleet-folder.ts';
import { changedPaths } from './json-diff.ts';

/**
 * What `apply` would do to make the runtime fleet equal a folder: a pure function of the
 * folder, the fleet as listed, and the stored configs of the folder's runtime pollers.
 */

export type PlanStep =
  | { action: 'create'; name: string; file: string; config: Record<string, unknown> }
  | {
      action: 'replace';
      name: string;
      file: string;
      config: Record<string, unknown>;
      /** Where the file differs from the stored config (paths, never values). */
      changed: string[];
    }
  | { action: 'unchanged'; name: string; file: string }
  | { action: 'delete'; name: string };

export type PlanAction = PlanStep['action'];

export interface Plan {
  /** Sorted by name within each action, the actions in the order `apply` takes them. */
  steps: PlanStep[];
  /** Runtime pollers not in the folder that stay, because `--prune` was not given. */
  kept: string[];
  /** Why the plan cannot be applied at all (a file naming a static poller). */
  errors: string[];
}

/** The order steps are printed and applied in: deletions, which cannot be undone, last. */
export const ACTION_ORDER: readonly PlanAction[] = ['create', 'replace', 'delete', 'unchanged'];

/** A request key of PUT /pollers/:name, not part of the config: never stored, never compared. */
const REQUEST_ONLY_KEYS = ['keep_secrets'];

export function planFleet(input: {
  dir: string;
  desired: readonly DesiredPoller[];
  /** Every poller GET /pollers lists, static and runtime. */
  listed: readonly { name: string; kind: string; labels?: Record<string, string> }[];
  /** GET /pollers/:name/config's `config` for each runtime poller of the folder. */
  stored: ReadonlyMap<string, unknown>;
  prune: boolean;
  /**
   * `--selector KEY=VALUE`: the runtime pollers this folder owns. Only they are pruned, so a
   * folder never deletes the pollers a product creates through the API (kubectl's `-l`).
   */
  selector?: { key: string; value: string } | null;
}): Plan {
  const kindOf = new Map(input.listed.map((poller) => [poller.name, poller.kind]));
  const steps: PlanStep[] = [];
  const errors: string[] = [];
  for (const { name, file, config } of input.desired) {
    if (kindOf.get(name) === 'static') {
      errors.push(
        `${file}: "${name}" is a static poller (wrangler.toml POLLERS): change it there, and take this file out of ${input.dir}`,
      );
      continue;
    }
    if (!input.stored.has(name)) {
      steps.push({ action: 'create', name, file, config });
      continue;
    }
    const changed = changedPaths(input.stored.get(name), storedForm(config));
    steps.push(
      changed.length === 0
        ? { action: 'unchanged', name, file }
        : { action: 'replace', name, file, config, changed },
    );
  }
  const inFolder = new Set(input.desired.map((poller) => poller.name));
  const { selector } = input;
  const owned = (labels: Record<string, string> | undefined) =>
    selector == null || labels?.[selector.key] === selector.value;
  const strays = input.listed
    .filter((poller) => poller.kind === 'runtime' && !inFolder.has(poller.name))
    .filter((poller) => owned(poller.labels))
    .map((poller) => poller.name);
  if (input.prune && input.desired.length === 0 && strays.length > 0) {
    // An empty folder is far more often a wrong path or a bad checkout than a wish to delete
    // the whole fleet; `pollers delete` does that one by one.
    errors.push(
      `${input.dir} holds no poller files: --prune would delete every runtime poller (${strays.length}); nothing is planned`,
    );
  } else if (input.prune) {
    for (const name of strays) steps.push({ action: 'delete', name });
  }
  const rank = (step: PlanStep) => ACTION_ORDER.indexOf(step.action);
  steps.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  return { steps, kept: input.prune ? [] : strays.sort(), errors };
}

/** Whether applying the plan would change anything. */
export const hasChanges = (plan: Plan) => plan.steps.some((step) => step.action !== 'unchanged');

/** The config as the Worker keeps it: what the PUT sends, less its request-only keys. */
function storedForm(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).filter(([key]) => !REQUEST_ONLY_KEYS.includes(key)),
  );
}
