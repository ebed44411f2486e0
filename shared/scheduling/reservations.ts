/**
 * Capacity reservations in one scheduling run: how many more claims each reservation can take,
 * as Karpenter's `ReservationManager` counts them (KC
 * pkg/controllers/provisioning/scheduling/reservationmanager.go): a reservation's capacity is the
 * smallest `reservationCapacity` any of its offerings reports, and each claim that launches into it
 * takes one. A claim given a reservation is pinned to it, as Karpenter's `FinalizeScheduling` pins
 * one: capacity type `reserved` and `karpenter.k8s.aws/capacity-reservation-id` In [id], so it never
 * over-launches a reservation another claim of the run holds.
 *
 * Difference from Karpenter: claims take reservations when their launch is decided
 * (scheduler.ts `launchDecisions`, claims in packing order), not while pods are packed; a claim
 * packed for a reservation that earlier claims used up launches its other offerings (on-demand or
 * spot when its NodePool allows them, else its pods stay pending with the reason below).
 */
import type { Offering } from '../catalog/types.ts';
import type { TemplateType } from './template.ts';

/** Why a claim whose only offerings are full reservations does not launch. */
export const ReservationsFullReason = 'all compatible capacity reservations are in use by other nodeclaims';

/** Remaining capacity per reservation id over one run. */
export class ReservationLedger {
  private readonly remaining = new Map<string, number>();

  /** Counts every reserved offering of the types (the least count a reservation's offerings report wins). */
  constructor(types: Iterable<TemplateType>) {
    for (const t of types)
      for (const o of t.offerings) {
        if (o.capacityType !== 'reserved' || !o.reservationId) continue;
        const n = o.reservationCapacity ?? 0;
        const cur = this.remaining.get(o.reservationId);
        if (cur === undefined || n < cur) this.remaining.set(o.reservationId, n);
      }
  }

  /** True when the run has reserved offerings at all (nothing to do otherwise). */
  get empty(): boolean {
    return this.remaining.size === 0;
  }

  /** Whether an offering can still be launched: not reserved, or its reservation has room. */
  admits(o: Offering): boolean {
    return o.capacityType !== 'reserved' || (!!o.reservationId && (this.remaining.get(o.reservationId) ?? 0) > 0);
  }

  /** Instances the reservation can still take in this run (0 for an unknown one). */
  remainingOf(reservationId: string): number {
    return this.remaining.get(reservationId) ?? 0;
  }

  /** Takes one slot. @returns false when the reservation has none left. */
  take(reservationId: string): boolean {
    const n = this.remaining.get(reservationId) ?? 0;
    if (n <= 0) return false;
    this.remaining.set(reservationId, n - 1);
    return true;
  }

  /**
   * `options` without the reserved offerings of full reservations (types left with none dropped);
   * the same array when nothing changes, so claims without reserved offerings cost nothing.
   */
  withoutFull(options: readonly TemplateType[]): readonly TemplateType[] {
    if (this.empty || options.every((t) => t.offerings.every((o) => this.admits(o)))) return options;
    const out: TemplateType[] = [];
    for (const t of options) {
      const offerings = t.offerings.filter((o) => this.admits(o));
      if (offerings.length === 0) continue;
      out.push({ ...t, offerings, minPriceUsdPerHour: Math.min(...offerings.map((o) => o.priceUsdPerHour)) });
    }
    return out;
  }
}

/**
 * The reservation a claim launching `reserved` takes: the cheapest reserved offering of its launch
 * types (in their order) that the ledger admits and `matches` allows (zone requirements), or undefined.
 */
export function chooseReservation(
  launch: readonly TemplateType[],
  ledger: ReservationLedger,
  matches: (o: Offering) => boolean,
): { offering: Offering; type: TemplateType } | undefined {
  let best: { offering: Offering; type: TemplateType } | undefined;
  for (const t of launch)
    for (const o of t.offerings) {
      if (o.capacityType !== 'reserved' || !ledger.admits(o) || !matches(o)) continue;
      if (!best || o.priceUsdPerHour < best.offering.priceUsdPerHour) best = { offering: o, type: t };
    }
  return best;
}
