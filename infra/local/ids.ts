/**
 * Identifiers and randomness for the stand-ins (instance ids, event ids, uids, fleet and request
 * ids) and the random draws the functions make locally (NodeClaim name suffixes): from
 * `node:crypto` by default, or — once {@link seedLocalIds} is called (the chaos harness, with the
 * run's seed) — a deterministic sequence, so a seed names the same objects run after run and a
 * failing run can be replayed and compared line by line.
 */
import { randomBytes } from 'node:crypto';

let state: number | undefined;

/** From now on, every id and draw in this process follows `seed` (a 32-bit integer). */
export function seedLocalIds(seed: number): void {
  state = seed >>> 0;
}

/** Uniform in [0, 1): mulberry32 when seeded (small, fast, enough for names), else 48 bits from node:crypto. */
export function localRandom(): number {
  if (state === undefined) return randomBytes(6).readUIntBE(0, 6) / 2 ** 48;
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
}

/** `bytes` random bytes as lower-case hex. */
export function localHex(bytes: number): string {
  if (state === undefined) return randomBytes(bytes).toString('hex');
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(localRandom() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}

/** A version-4-shaped UUID. */
export function localUuid(): string {
  const h = localHex(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
