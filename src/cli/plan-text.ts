import { ACTION_ORDER, type Plan, type PlanAction, type PlanStep } from './plan.ts';

/** Each action's mark and word, as terraform marks its plan (+ create, ~ change, - destroy). */
const MARKS = {
  create: '+ create   ',
  replace: '~ replace  ',
  delete: '- delete   ',
  unchanged: '= unchanged',
} as const satisfies Record<PlanAction, string>;

/** The most changed paths shown for one replace: the rest are counted. */
const MAX_PATHS = 8;

/** The most runtime pollers named as kept: a fleet of thousands would drown the plan. */
const MAX_NAMES = 10;

/** The plan as lines: one per poller, then the runtime pollers kept, then the totals. */
export function planLines(plan: Plan, dir: string): string[] {
  const lines = plan.steps.map((step) => `${MARKS[step.action]} ${step.name}${detail(step, dir)}`);
  if (plan.kept.length > 0) {
    const named = plan.kept.slice(0, MAX_NAMES).join(', ');
    const more = plan.kept.length > MAX_NAMES ? ` and ${plan.kept.length - MAX_NAMES} more` : '';
    lines.push(
      `  (${plan.kept.length} runtime poller${plan.kept.length === 1 ? '' : 's'} not in ${dir} kept; --prune deletes them: ${named}${more})`,
    );
  }
  lines.push(`Plan: ${totals(plan)}.`);
  return lines;
}

/** `1 to create, 2 to replace, 0 to delete, 4 unchanged`. */
export function totals(plan: Plan): string {
  const count = (action: PlanAction) => plan.steps.filter((step) => step.action === action).length;
  return ACTION_ORDER.map((action) =>
    action === 'unchanged' ? `${count(action)} unchanged` : `${count(action)} to ${action}`,
  ).join(', ');
}

function detail(step: PlanStep, dir: string): string {
  switch (step.action) {
    case 'create':
    case 'unchanged':
      return `  (${step.file})`;
    case 'replace': {
      const shown = step.changed.slice(0, MAX_PATHS).join(', ');
      const more =
        step.changed.length > MAX_PATHS ? ` and ${step.changed.length - MAX_PATHS} more` : '';
      return `  (${step.file}: ${shown}${more})`;
    }
    case 'delete':
      return `  (runtime, not in ${dir})`;
  }
}
