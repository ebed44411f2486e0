package main

// Validity mode: kube-scheduler's filters run on a decision the parity harness hands in, with
// Kubernetes' own code (k8s.io/component-helpers for node affinity and taints, k8s.io/apimachinery
// for label selectors), so the check does not share nodefleet's matchers. For each placed pod it
// reports what kube-scheduler would certainly refuse: an untolerated NoSchedule/NoExecute taint;
// on an existing node, a nodeSelector or required node affinity the node does not match; required
// pod anti-affinity with a pod in the same domain (either pod's term); a DoNotSchedule topology
// spread beyond maxSkew where the final counts prove it (test/parity/validity.ts says when).

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// ValidityInput is one scenario's decisions to check; the pods and nodes are the scenario's.
type ValidityInput struct {
	Decisions [][]ValiditySeat `json:"decisions"`
}

// ValiditySeat is one pod (`namespace/name` of the scenario's pods) where a decision put it: on an
// existing node (Node set; its labels and taints are the node's) or on a new claim (Labels: those
// the claim is pinned to, a hostname of its own included; Taints: the NodePool's).
type ValiditySeat struct {
	Pod    string            `json:"pod"`
	Node   string            `json:"node,omitempty"`
	Labels map[string]string `json:"labels"`
	Taints []corev1.Taint    `json:"taints"`
}

// ValidityOutput lists, per decision, the refused placements (`namespace/name: reason`), sorted.
type ValidityOutput struct {
	Refused [][]string `json:"refused"`
}

type seat struct {
	ValiditySeat
	pod *corev1.Pod
}

func (s *seat) bound() bool { return s.pod.Spec.NodeName != "" }

func (s *seat) node() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Node, Labels: s.Labels}, Spec: corev1.NodeSpec{Taints: s.Taints}}
}

func podKey(p *corev1.Pod) string {
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + p.Name
}

func hardTaints(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

func untolerated(s *seat, tolerations []corev1.Toleration) (corev1.Taint, bool) {
	return schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), s.Taints, tolerations, hardTaints, false)
}

// selectorWithKeys is a term's or spread's label selector with its matchLabelKeys added as `In` the
// owner pod's values (kube-scheduler merges them the same way).
func selectorWithKeys(ls *metav1.LabelSelector, keys []string, owner *corev1.Pod) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		v, ok := owner.Labels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, selection.In, []string{v})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// nodeRequirements is the pod's nodeSelector and required node affinity as label requirements, one
// set per term (ORed); nil when it has neither.
func nodeRequirements(p *corev1.Pod) ([][]labels.Requirement, error) {
	var base []labels.Requirement
	for k, v := range p.Spec.NodeSelector {
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, err
		}
		base = append(base, *r)
	}
	var terms []corev1.NodeSelectorTerm
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	if len(terms) == 0 {
		if len(base) == 0 {
			return nil, nil
		}
		return [][]labels.Requirement{base}, nil
	}
	ops := map[corev1.NodeSelectorOperator]selection.Operator{
		corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn, corev1.NodeSelectorOpExists: selection.Exists,
		corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist, corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
	}
	var out [][]labels.Requirement
	for _, t := range terms {
		rs := append([]labels.Requirement{}, base...)
		for _, e := range t.MatchExpressions {
			op, ok := ops[e.Operator]
			if !ok {
				return nil, fmt.Errorf("pod %s: node selector operator %q", podKey(p), e.Operator)
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				return nil, fmt.Errorf("pod %s: %v", podKey(p), err)
			}
			rs = append(rs, *r)
		}
		out = append(out, rs)
	}
	return out, nil
}

// couldMatch: some term has no requirement the known labels refuse (a key the claim has no value
// for yet may still get a matching one).
func couldMatch(terms [][]labels.Requirement, known map[string]string) bool {
	if terms == nil {
		return true
	}
	for _, t := range terms {
		ok := true
		for _, r := range t {
			if _, has := known[r.Key()]; has && !r.Matches(labels.Set(known)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// spreadView: what decides how a pod's spreads count (constraints, node affinity, tolerations).
func spreadView(p *corev1.Pod) string {
	var req any
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		req = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	b, _ := json.Marshal([]any{p.Spec.TopologySpreadConstraints, p.Spec.NodeSelector, req, p.Spec.Tolerations})
	return string(b)
}

func inNamespaces(owner *corev1.Pod, t corev1.PodAffinityTerm, other *corev1.Pod) bool {
	if t.NamespaceSelector != nil {
		// The scenarios have no Namespace objects: an empty selector (every namespace) is the one
		// form they use.
		return true
	}
	ns := t.Namespaces
	if len(ns) == 0 {
		ns = []string{owner.Namespace}
	}
	for _, n := range ns {
		if n == other.Namespace || (n == "" && other.Namespace == "default") || (n == "default" && other.Namespace == "") {
			return true
		}
	}
	return false
}

func sameNamespace(a, b *corev1.Pod) bool {
	na, nb := a.Namespace, b.Namespace
	if na == "" {
		na = "default"
	}
	if nb == "" {
		nb = "default"
	}
	return na == nb
}

func runValidity(sc *Scenario) (*ValidityOutput, error) {
	pods := map[string]*corev1.Pod{}
	for i := range sc.Pods {
		pods[podKey(&sc.Pods[i])] = &sc.Pods[i]
	}
	out := &ValidityOutput{Refused: [][]string{}}
	for _, d := range sc.Validity.Decisions {
		var all []*seat
		for _, s := range d {
			p, ok := pods[s.Pod]
			if !ok {
				return nil, fmt.Errorf("validity: no pod %s in the scenario", s.Pod)
			}
			all = append(all, &seat{ValiditySeat: s, pod: p})
		}
		refused, err := refusedPlacements(sc, all)
		if err != nil {
			return nil, err
		}
		out.Refused = append(out.Refused, refused)
	}
	return out, nil
}

func refusedPlacements(sc *Scenario, all []*seat) ([]string, error) {
	found := map[string]bool{}
	for _, x := range all {
		if x.bound() {
			continue
		}
		if err := checkSpreads(sc, x, all, found); err != nil {
			return nil, err
		}
		if t, bad := untolerated(x, x.pod.Spec.Tolerations); bad {
			found[fmt.Sprintf("%s: does not tolerate %s", podKey(x.pod), t.ToString())] = true
		}
		if x.Node != "" {
			ok, err := nodeaffinity.GetRequiredNodeAffinity(x.pod).Match(x.node())
			if err != nil {
				return nil, fmt.Errorf("pod %s: %v", podKey(x.pod), err)
			}
			if !ok {
				found[fmt.Sprintf("%s: node %s matches none of its required node selector terms", podKey(x.pod), x.Node)] = true
			}
		}
		for _, y := range all {
			if y == x {
				continue
			}
			t, err := repels(x, y)
			if err != nil {
				return nil, err
			}
			if t == "" {
				if t, err = repels(y, x); err != nil {
					return nil, err
				}
			}
			if t != "" {
				found[fmt.Sprintf("%s: required pod anti-affinity on %s with %s in %s", podKey(x.pod), t, podKey(y.pod), x.Labels[t])] = true
			}
		}
	}
	lines := make([]string, 0, len(found))
	for l := range found {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return lines, nil
}

// repels: the topology key of a required anti-affinity term of a's pod that b's pod breaks (the
// same value of the key, b in the term's namespaces and selected by it), or "".
func repels(a, b *seat) (string, error) {
	aff := a.pod.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil {
		return "", nil
	}
	for _, t := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		v, ok := a.Labels[t.TopologyKey]
		if !ok || b.Labels[t.TopologyKey] != v {
			continue
		}
		if _, has := b.Labels[t.TopologyKey]; !has {
			continue
		}
		sel, err := selectorWithKeys(t.LabelSelector, t.MatchLabelKeys, a.pod)
		if err != nil {
			return "", fmt.Errorf("pod %s: anti-affinity selector: %v", podKey(a.pod), err)
		}
		if inNamespaces(a.pod, t, b.pod) && sel.Matches(labels.Set(b.pod.Labels)) {
			return t.TopologyKey, nil
		}
	}
	return "", nil
}

// checkSpreads adds to found each DoNotSchedule spread of x's pod that the final counts prove broken.
func checkSpreads(sc *Scenario, x *seat, all []*seat, found map[string]bool) error {
	terms, err := nodeRequirements(x.pod)
	if err != nil {
		return err
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(x.pod)
	matchesAffinity := func(labelsOf map[string]string, name string) (bool, error) {
		return affinity.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labelsOf}})
	}
	for _, c := range x.pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		v, ok := x.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		sel, err := selectorWithKeys(c.LabelSelector, c.MatchLabelKeys, x.pod)
		if err != nil {
			return fmt.Errorf("pod %s: spread selector: %v", podKey(x.pod), err)
		}
		honorAffinity := c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
		honorTaints := c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
		counted := func(y *seat) bool { return sameNamespace(x.pod, y.pod) && sel.Matches(labels.Set(y.pod.Labels)) }
		passes := func(labelsOf map[string]string, name string, taints []corev1.Taint) (bool, error) {
			if honorAffinity {
				ok, err := matchesAffinity(labelsOf, name)
				if err != nil || !ok {
					return false, err
				}
			}
			if honorTaints {
				if _, bad := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), taints, x.pod.Spec.Tolerations, hardTaints, false); bad {
					return false, nil
				}
			}
			return true, nil
		}
		counts := map[string]int{}
		unknown := false
		for _, y := range all {
			if !counted(y) {
				continue
			}
			ok, err := passes(y.Labels, y.Node, y.Taints)
			if err != nil {
				return fmt.Errorf("pod %s: %v", podKey(x.pod), err)
			}
			// A claim holds only the labels it is pinned to: one the pod's node affinity refuses
			// may still launch where it matches, and then its count is not known.
			if !ok && honorAffinity && y.Node == "" && !y.bound() && couldMatch(terms, y.Labels) {
				unknown = true
				break
			}
			if !ok {
				continue
			}
			d, has := y.Labels[c.TopologyKey]
			if !has {
				unknown = true
				break
			}
			counts[d]++
		}
		if unknown {
			continue
		}
		view := spreadView(x.pod)
		same := true
		for _, y := range all {
			if !y.bound() && y.Labels[c.TopologyKey] == v && counted(y) && spreadView(y.pod) != view {
				same = false
				break
			}
		}
		if !same {
			continue
		}
		domains := map[string]bool{v: true}
		for i := range sc.Nodes {
			n := &sc.Nodes[i]
			d, has := n.Labels[c.TopologyKey]
			if !has {
				continue
			}
			ok, err := passes(n.Labels, n.Name, n.Spec.Taints)
			if err != nil {
				return fmt.Errorf("pod %s: %v", podKey(x.pod), err)
			}
			if ok {
				domains[d] = true
			}
		}
		least := math.MaxInt
		for d := range domains {
			least = min(least, counts[d])
		}
		if here := counts[v]; here-least > int(c.MaxSkew) {
			found[fmt.Sprintf("%s: topology spread on %s has %d in %s against %d (maxSkew %d)", podKey(x.pod), c.TopologyKey, here, v, least, c.MaxSkew)] = true
		}
	}
	return nil
}
