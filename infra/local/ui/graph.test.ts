import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { executionProgress, stateGraph } from './graph.ts';

const termination = JSON.parse(readFileSync(new URL('../../../statemachines/termination.asl.json', import.meta.url), 'utf8'));

describe('stateGraph', () => {
  it('lays the termination machine out: the success path in the main column, loop states left of it, back edges marked', () => {
    // Act
    const g = stateGraph(termination);
    // Assess
    const at = (name: string) => g.states.find((s) => s.name === name)!;
    expect(g.states).toHaveLength(Object.keys(termination.States).length);
    const main = g.states
      .filter((s) => s.column === g.mainColumn)
      .sort((a, b) => a.layer - b.layer)
      .map((s) => s.name);
    expect(main).toEqual(['Cordon', 'Drain', 'DrainProgress', 'TerminateInstance', 'InstanceGone', 'DeleteNode', 'Finalize', 'Outcome', 'Terminated']);
    expect(
      g.edges
        .filter((e) => e.back)
        .map((e) => `${e.from}→${e.to}`)
        .sort(),
    ).toEqual(['WaitAfterDrainFailure→Cordon', 'WaitAfterUnrecordedFailure→Cordon', 'WaitForDrain→Drain', 'WaitForInstance→TerminateInstance']);
    expect(
      g.states
        .filter((s) => s.column < g.mainColumn)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['WaitAfterDrainFailure', 'WaitAfterUnrecordedFailure', 'WaitForDrain', 'WaitForInstance']);
    expect(Math.min(...g.states.map((s) => s.column))).toBe(0);
    // Every forward edge goes down at least one layer; no two states share a cell.
    for (const e of g.edges.filter((x) => !x.back)) expect(at(e.to).layer).toBeGreaterThan(at(e.from).layer);
    expect(new Set(g.states.map((s) => `${s.layer}/${s.column}`)).size).toBe(g.states.length);
    expect(g.edges.filter((e) => e.kind === 'catch').map((e) => `${e.from}→${e.to}`)).toContain('Cordon→RecordDrainFailure');
    expect(g.width).toBe(Math.max(...g.states.map((s) => s.column)) + 1);
  });

  it('rejects a transition to a state that does not exist', () => {
    expect(() => stateGraph({ StartAt: 'A', States: { A: { Type: 'Task', Next: 'B' } } })).toThrow(/unknown state B/);
    expect(() => stateGraph({ StartAt: 'X', States: { A: { Type: 'Succeed' } } })).toThrow(/StartAt/);
  });
});

describe('executionProgress', () => {
  it('follows a drain loop: transitions counted, the current state is the last one entered', () => {
    // Prepare
    const events = [
      { type: 'ExecutionStarted' },
      { type: 'TaskStateEntered', stateName: 'Cordon' },
      { type: 'TaskStateExited', stateName: 'Cordon' },
      { type: 'TaskStateEntered', stateName: 'Drain' },
      { type: 'ChoiceStateEntered', stateName: 'DrainProgress' },
      { type: 'WaitStateEntered', stateName: 'WaitForDrain' },
      { type: 'TaskStateEntered', stateName: 'Drain' },
      { type: 'ChoiceStateEntered', stateName: 'DrainProgress' },
      { type: 'WaitStateEntered', stateName: 'WaitForDrain' },
      { type: 'WaitStateExited', stateName: 'WaitForDrain' },
    ];
    // Act
    const p = executionProgress(events);
    // Assess
    expect(p.current).toBe('WaitForDrain');
    expect(p.ended).toBe(false);
    expect(p.transitions).toEqual({ 'Cordon→Drain': 1, 'Drain→DrainProgress': 2, 'DrainProgress→WaitForDrain': 2, 'WaitForDrain→Drain': 1 });
    expect(executionProgress([...events, { type: 'ExecutionFailed' }]).ended).toBe(true);
  });
});
