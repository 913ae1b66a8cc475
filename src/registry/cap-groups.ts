/** A group of the fleet as counted: its labels (state, kind and label values) and its sums. */
export interface CountedGroup {
  state: string | null;
  kind: string;
  labels: Record<string, string>;
  count: number;
  atFault: number;
  deadLetters: number;
}

/** The label value of the group that sums the groups beyond the cap. */
export const OTHER = 'other';

/**
 * At most `max` groups: the largest `max - 1` as they are (most pollers first), and the rest
 * summed into one whose every label (state, kind and each label key) is `other`, so a label
 * with a value per poller (a tenant id in METRICS_LABELS) cannot make a series per poller,
 * and the sums over all groups stay whole.
 */
export function capGroups(groups: CountedGroup[], max: number): CountedGroup[] {
  if (groups.length <= max) return groups;
  const sorted = [...groups].sort((a, b) => b.count - a.count || keyOf(a).localeCompare(keyOf(b)));
  const kept = sorted.slice(0, Math.max(0, max - 1));
  const rest = sorted.slice(kept.length);
  const labels = Object.fromEntries(Object.keys(rest[0]?.labels ?? {}).map((key) => [key, OTHER]));
  const other: CountedGroup = {
    state: OTHER,
    kind: OTHER,
    labels,
    count: sum(rest, (group) => group.count),
    atFault: sum(rest, (group) => group.atFault),
    deadLetters: sum(rest, (group) => group.deadLetters),
  };
  return [...kept, other];
}

const keyOf = (group: CountedGroup) =>
  JSON.stringify([group.state, group.kind, Object.entries(group.labels)]);

const sum = (groups: CountedGroup[], value: (group: CountedGroup) => number) =>
  groups.reduce((total, group) => total + value(group), 0);
