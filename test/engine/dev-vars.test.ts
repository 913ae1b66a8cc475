import { describe, expect, it } from 'vitest';
import example from '../../.dev.vars.example?raw';
import { fillDevVars, parseDevVars } from '../../scripts/dev-vars.ts';
import { signingSecretProblem } from '../../src/delivery/standard-webhooks.ts';

const COMMITTED_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('npm start: .dev.vars from .dev.vars.example', () => {
  it('gives WEBHOOK_SECRET a fresh signing secret of at least 24 bytes, never a committed value', () => {
    const first = parseDevVars(fillDevVars(example)).WEBHOOK_SECRET ?? '';
    const second = parseDevVars(fillDevVars(example)).WEBHOOK_SECRET ?? '';
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(signingSecretProblem(first)).toBeUndefined();
    expect(atob(first.slice('whsec_'.length)).length).toBeGreaterThanOrEqual(24);
    expect(example).not.toContain(first);
    expect(second).not.toBe(first);
  });

  it('gives every token a fresh random value', () => {
    const vars = parseDevVars(fillDevVars(example));
    expect(vars.ADMIN_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.STATUS_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.ADMIN_TOKEN).not.toBe(vars.STATUS_TOKEN);
  });

  it('keeps comment lines as written, even where they mention the placeholders', () => {
    const comments = (text: string) => text.split('\n').filter((line) => line.startsWith('#'));
    expect(comments(example).join('\n')).toContain('change-me');
    expect(comments(fillDevVars(example))).toEqual(comments(example));
  });

  it('an existing .dev.vars keeps its own values but loses the once-committed webhook secret', () => {
    const existing = `ADMIN_TOKEN=mine\nWEBHOOK_SECRET=${COMMITTED_WEBHOOK_SECRET}\nSTATUS_TOKEN=change-me\n`;
    const vars = parseDevVars(fillDevVars(existing));
    expect(vars.ADMIN_TOKEN).toBe('mine');
    expect(vars.STATUS_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.WEBHOOK_SECRET).not.toBe(COMMITTED_WEBHOOK_SECRET);
    expect(signingSecretProblem(vars.WEBHOOK_SECRET ?? '')).toBeUndefined();
  });
});
