/**
 * Randomness for generated names: crypto-backed in production (names must not repeat across
 * Lambda containers started from the same snapshot, where Math.random state can be shared).
 */
import { randomBytes } from 'node:crypto';

/** Uniform in [0, 1), 48 bits from node:crypto. */
export function cryptoRandom(): number {
  return randomBytes(6).readUIntBE(0, 6) / 2 ** 48;
}
