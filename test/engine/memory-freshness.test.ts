import { describe, it } from 'vitest';
import { MemoryFreshness } from '../../src/engine/memory-freshness.ts';
import { freshnessContract } from '../contract/freshness-contract.ts';

describe('MemoryFreshness honours the freshness contract', () => {
  for (const [name, check] of Object.entries(freshnessContract)) {
    it(name, () => check(new MemoryFreshness()));
  }
});
