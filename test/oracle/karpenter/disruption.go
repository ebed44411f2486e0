// Disruption mode: a scenario with a "disruption" field runs Karpenter's disruption methods on the same
// fakes the scheduling mode uses and prints the first command Karpenter would start (README.md).
//
// What runs is the method loop of Karpenter's disruption controller, called through the package's exported
// API at a fixed time: for each method of disruption.NewMethods in order, GetCandidatesWithTotals with the
// method's filter, the NodePool totals handed to consolidation methods, BuildDisruptionBudgetMapping for the
// method's reason, then ComputeCommands; the first command that is not a no-op wins. Those calls read the
// controller-runtime fake client and the cluster state only. What is not run is the part that acts: the
// orchestration queue (Queue.StartCommand taints nodes, creates replacement NodeClaims and waits for them
// to initialize, which needs the lifecycle controllers and a kubelet) and the termination controller.
package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/events"
)

// DisruptionInput turns a scenario into a disruption run (README.md "Disruption mode").
type DisruptionInput struct {
	// Now is the time the run happens at (RFC 3339). Node and pod creation times are read against it.
	Now metav1.Time `json:"now"`
}

// DisruptionOutput is what one disruption run decided.
type DisruptionOutput struct {
	// Command is the first command Karpenter would start, nil when no method found one.
	Command *OutCommand `json:"command"`
	// Methods lists, in Karpenter's order, each method that ran and the nodes its filter kept.
	Methods []OutMethod `json:"methods"`
}

type OutCommand struct {
	// Method in nodefleet's names (shared/disruption/types.ts MethodName).
	Method   string `json:"method"`
	Reason   string `json:"reason"`
	Decision string `json:"decision"`
	// Candidates are node names, sorted.
	Candidates   []string   `json:"candidates"`
	Replacements []OutClaim `json:"replacements"`
	// SavingsUsdPerHour is Karpenter's estimate (candidates' prices minus the replacements' cheapest launchable offerings).
	SavingsUsdPerHour float64 `json:"savingsUsdPerHour"`
}

type OutMethod struct {
	Method     string         `json:"method"`
	Candidates []OutCandidate `json:"candidates"`
}

// OutCandidate is a node a method's filter kept, with the figures Karpenter orders candidates by.
type OutCandidate struct {
	Node string `json:"node"`
	// Price is the node's offering price, USD/h.
	Price float64 `json:"price"`
	// SavingsRatio is price ÷ rescheduling disruption cost: emptiness and consolidation take the highest first.
	SavingsRatio float64 `json:"savingsRatio"`
	// Empty: no reschedulable pod (drift takes empty candidates first).
	Empty bool `json:"empty"`
}

// disruptionClock is the run's clock: Now is fixed at the scenario's time and waits return at once, so
// the 15 s command validation delay re-checks the same (static) state instead of sleeping.
type disruptionClock struct {
	clock.RealClock
	now time.Time
}

func (c *disruptionClock) Now() time.Time                  { return c.now }
func (c *disruptionClock) Since(t time.Time) time.Duration { return c.now.Sub(t) }
func (c *disruptionClock) Sleep(time.Duration)             {}
func (c *disruptionClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// lastPodEvent is the latest start (else creation) time of the pods bound to node, zero when none is.
func lastPodEvent(pods []corev1.Pod, node string) metav1.Time {
	var last metav1.Time
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != node {
			continue
		}
		t := p.CreationTimestamp
		if p.Status.StartTime != nil {
			t = *p.Status.StartTime
		}
		if t.After(last.Time) {
			last = t
		}
	}
	return last
}

// methodName is the method's name in nodefleet's terms.
func methodName(m disruption.Method) string {
	switch m.(type) {
	case *disruption.Emptiness:
		return "emptiness"
	case *disruption.StaticDrift:
		return "static-drift"
	case *disruption.Drift:
		return "drift"
	case *disruption.MultiNodeConsolidation:
		return "multi-node-consolidation"
	case *disruption.SingleNodeConsolidation:
		return "single-node-consolidation"
	case *disruption.Repair:
		return "repair"
	}
	return fmt.Sprintf("%T", m)
}

func runDisruption(sc *Scenario, byName map[string]*cloudprovider.InstanceType, its []*cloudprovider.InstanceType) (*DisruptionOutput, error) {
	if sc.Disruption.Now.IsZero() {
		return nil, fmt.Errorf("disruption.now: missing")
	}
	clk := &disruptionClock{now: sc.Disruption.Now.Time}
	ctx := optionsContext(sc, "disruption")
	kube, cp, cluster, err := load(ctx, sc, its, clk, clk)
	if err != nil {
		return nil, err
	}
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov := provisioning.NewProvisioner(kube, recorder, cp, cluster, clk, nil, nil)
	queue := disruption.NewQueue(kube, recorder, cluster, clk, prov)

	out := &DisruptionOutput{Methods: []OutMethod{}}
	for _, m := range disruption.NewMethods(ctx, clk, cluster, kube, prov, cp, recorder, queue) {
		candidates, totals, err := disruption.GetCandidatesWithTotals(ctx, cluster, kube, recorder, clk, cp, m.ShouldDisrupt, m.Class(), queue, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: candidates: %v", methodName(m), err)
		}
		described := lo.Map(candidates, func(c *disruption.Candidate, _ int) OutCandidate {
			return OutCandidate{Node: c.Name(), Price: c.Price, SavingsRatio: c.SavingsRatio(), Empty: c.IsEmpty()}
		})
		sort.Slice(described, func(i, j int) bool { return described[i].Node < described[j].Node })
		out.Methods = append(out.Methods, OutMethod{Method: methodName(m), Candidates: described})
		if len(candidates) == 0 {
			continue
		}
		if setter, ok := m.(disruption.NodePoolTotalsSetter); ok {
			setter.SetNodePoolTotals(totals)
		}
		budgets, err := disruption.BuildDisruptionBudgetMapping(ctx, cluster, clk, kube, cp, recorder, m.Reason())
		if err != nil {
			return nil, fmt.Errorf("%s: budgets: %v", methodName(m), err)
		}
		cmds, err := m.ComputeCommands(ctx, budgets, candidates...)
		if err != nil {
			return nil, fmt.Errorf("%s: computing commands: %v", methodName(m), err)
		}
		cmds = lo.Filter(cmds, func(c disruption.Command, _ int) bool { return c.Decision() != disruption.NoOpDecision })
		if len(cmds) == 0 {
			continue
		}
		cmd := cmds[0]
		cmd.Method = m
		oc := &OutCommand{
			Method:            methodName(m),
			Reason:            string(m.Reason()),
			Decision:          string(cmd.Decision()),
			Candidates:        sortedNames(cmd.SourceNodeNames()),
			Replacements:      []OutClaim{},
			SavingsUsdPerHour: cmd.EstimatedSavings(),
		}
		for _, r := range cmd.Replacements {
			oc.Replacements = append(oc.Replacements, outClaim(r.NodeClaim, byName))
		}
		out.Command = oc
		return out, nil
	}
	return out, nil
}

func sortedNames(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
}
