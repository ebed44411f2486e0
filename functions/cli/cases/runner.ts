/**
 * The scenario-case runner: checks each case's `expect` keys with the part of nodefleet that
 * owns them — provisioning keys with the scheduling simulation (./provisioning.ts), `errors`
 * with NodePool / EC2NodeClass validation, disruption and garbage-collection keys with
 * `checkDisruptionCase` of ./disruption.ts. Every checking module is imported statically: one
 * that fails to load fails the whole run (no case is ever skipped or left pending).
 */
import { validateObject } from '../../../shared/api/validate.ts';
import { settingsFromCase } from '../../../shared/api/settings.ts';
import { checkDisruptionCase } from './disruption.ts';
import { DisruptionKeys, ProvisioningExpectKeys, type LoadedCase } from './load.ts';
import { checkProvisioning } from './provisioning.ts';
import { caseResolutions, snapshotFromCase } from './snapshot.ts';

/**
 * `known-difference`: the case carries `knownDifference: <reason>` (a Karpenter behaviour
 * nodefleet does not share yet, recorded in COVERAGE.md) and its expectations do fail. Such a
 * case never fails the run; once its expectations hold it fails, so the marker is removed.
 */
export type CaseStatus = 'passed' | 'failed' | 'known-difference';

export interface CaseResult {
  name: string;
  file: string;
  status: CaseStatus;
  /** Failure lines (expected vs got). */
  messages: string[];
}

function errorText(e: unknown): string {
  const err = e as { message?: string; problems?: string[] };
  return err.problems?.length ? err.problems.join('; ') : (err.message ?? String(e)).split('\n')[0];
}

/** Runs one case. Never throws: a crash is a failure with its message. */
export async function runCase(c: LoadedCase): Promise<CaseResult> {
  const base = { name: c.name, file: c.file };
  if (c.problems.length > 0) return { ...base, status: 'failed', messages: c.problems };
  const expect = c.doc.expect as Record<string, any>;
  const messages: string[] = [];
  try {
    if ('errors' in expect) {
      const staticCapacity = settingsFromCase((c.doc.settings ?? {}) as Record<string, unknown>).featureGates.StaticCapacity;
      const problems = [...(c.doc.nodePools ?? []), ...(c.doc.nodeClasses ?? [])].flatMap((o: unknown) => validateObject(o, { staticCapacity }));
      const text = problems.join('\n').toLowerCase();
      for (const want of expect.errors as string[]) {
        if (!text.includes(String(want).toLowerCase()))
          messages.push(`errors: expected a problem mentioning "${want}", got ${problems.length ? problems.join('; ') : 'no problems'}`);
      }
    }
    if (ProvisioningExpectKeys.some((k) => k in expect)) {
      const snapshot = snapshotFromCase(c.doc, await caseResolutions(c.doc));
      messages.push(...checkProvisioning(snapshot, expect).failures);
    }
    if (DisruptionKeys.some((k) => k in expect)) messages.push(...checkDisruptionCase(c.doc).failures);
  } catch (e) {
    messages.push(`error: ${errorText(e)}`);
  }
  const known = c.doc.knownDifference;
  if (known !== undefined) {
    if (typeof known !== 'string' || known.trim() === '') return { ...base, status: 'failed', messages: ['knownDifference: expected the reason as text'] };
    if (messages.length > 0) return { ...base, status: 'known-difference', messages: [known, ...messages] };
    return { ...base, status: 'failed', messages: [`marked knownDifference ("${known}") but every expectation holds: remove the marker`] };
  }
  if (messages.length > 0) return { ...base, status: 'failed', messages };
  return { ...base, status: 'passed', messages: [] };
}

/** Runs cases in order. */
export async function runCases(cases: readonly LoadedCase[]): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const c of cases) out.push(await runCase(c));
  return out;
}

/** The report: one line per failing case and per known difference, then `N passed, M failed` (and `, K known differences` when any). */
export function formatReport(results: readonly CaseResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    if (r.status === 'failed') lines.push(`FAIL ${r.name}: ${r.messages.join(' | ')}`);
    if (r.status === 'known-difference') lines.push(`DIFF ${r.name}: ${r.messages.join(' | ')}`);
  }
  const n = (s: CaseStatus) => results.filter((r) => r.status === s).length;
  const known = n('known-difference');
  lines.push(`${n('passed')} passed, ${n('failed')} failed${known ? `, ${known} known differences` : ''}`);
  return lines.join('\n');
}
