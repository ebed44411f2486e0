/**
 * Splits a batch of pods into `Unschedulable Pods` details that each stay under the PutEvents
 * entry size limit (256 KB, counted as UTF-8 bytes of Source + DetailType + Detail).
 */
import type { AgentPod, UnschedulablePodsDetail } from '../../shared/api/agent-events.ts';
import { AgentSchemaVersion } from '../../shared/api/contract.ts';

/**
 * Budget for one detail: 256 KB minus room for Source, DetailType and the detail's envelope
 * fields (a few hundred bytes), with margin.
 */
export const MaxDetailBytes = 256 * 1024 - 4 * 1024;

/** One detail per part; a single pod larger than the budget goes alone (the publisher reports it failed). */
export function splitDetails(
  pods: readonly AgentPod[],
  base: { cluster: string; batchId: string; observedAt: string },
  maxBytes = MaxDetailBytes,
): UnschedulablePodsDetail[] {
  const envelope = Buffer.byteLength(JSON.stringify({ schemaVersion: AgentSchemaVersion, ...base, part: 999, parts: 999, pods: [] }));
  const groups: AgentPod[][] = [];
  let cur: AgentPod[] = [];
  let bytes = envelope;
  for (const p of pods) {
    const size = Buffer.byteLength(JSON.stringify(p)) + 1;
    if (cur.length > 0 && bytes + size > maxBytes) {
      groups.push(cur);
      cur = [];
      bytes = envelope;
    }
    cur.push(p);
    bytes += size;
  }
  if (cur.length) groups.push(cur);
  return groups.map((g, i) => ({ schemaVersion: AgentSchemaVersion, ...base, part: i, parts: groups.length, pods: g }));
}
