import * as z from 'zod';

/**
 * A cap on the deletes one complete listing may deliver without a confirm (`reconcile.
 * max_deletes`, `source.resume.max_deletes`): "10%" of the known ids, or a count ("50").
 */
export const maxDeletes = z.union([z.string(), z.int().min(0)]).transform((value, ctx) => {
  if (typeof value === 'number') return { count: value };
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(value);
  if (percent) return { percent: Number(percent[1]) };
  if (/^\d+$/.test(value)) return { count: Number(value) };
  ctx.addIssue({
    code: 'custom',
    message: `"${value}" is not a share ("10%") or a count ("50") of the known ids`,
  });
  return z.NEVER;
});

export type MaxDeletes = z.output<typeof maxDeletes>;
