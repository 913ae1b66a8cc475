import { describe, it } from 'vitest';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { storeContract } from '../contract/store-contract.ts';

describe('MemoryStore honours the store contract', () => {
  for (const [name, check] of Object.entries(storeContract)) {
    it(name, () => check(new MemoryStore()));
  }
});
