import * as z from 'zod';
import { LABEL_KEY } from '../../config/schema.ts';
import type { ListQuery } from '../../registry/registry.ts';

/** Pollers on one page of the overview, unless `limit` says otherwise. */
export const OVERVIEW_PAGE = 50;

/** The states a poller reports, as the state filter offers them. */
export const POLLER_STATES = [
  'ok',
  'warning',
  'running',
  'failing',
  'lagging',
  'silent',
  'paused',
  'misconfigured',
] as const;

/** LABEL_KEY in words, for the 400 that refuses a filter by any other key. */
export const LABEL_KEY_RULE =
  'a label key is letters, digits and _, does not start with a digit, and has at most 64 characters';

/** `key=value`: a label name (as the config allows it), then its value. */
const LABEL = new RegExp(`^(${LABEL_KEY.source.slice(1, -1)})=(.*)$`, 's');

/** Form fields arrive as strings: spaces around them are dropped, and a blank one is absent. */
const blankIsAbsent = (value: unknown) => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
};

/** The overview's query string (`?search=&label=key=value&state=&cursor=&limit=`). */
export const overviewQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(OVERVIEW_PAGE),
  cursor: z.preprocess(blankIsAbsent, z.string().max(200).optional()),
  search: z.preprocess(blankIsAbsent, z.string().max(100).optional()),
  label: z.preprocess(
    blankIsAbsent,
    z
      .string()
      .max(400)
      .regex(LABEL, 'the label filter must be key=value, e.g. tier=gold')
      .optional(),
  ),
  state: z.preprocess(blankIsAbsent, z.enum(POLLER_STATES).optional()),
});

/** The overview's query, validated, as a registry query. */
export function listQueryOf(query: z.output<typeof overviewQuery>): ListQuery {
  const { label, ...rest } = query;
  const match = label === undefined ? null : LABEL.exec(label);
  return { ...rest, ...(match ? { label: { key: match[1] ?? '', value: match[2] ?? '' } } : {}) };
}
