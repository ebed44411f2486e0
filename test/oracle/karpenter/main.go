// Command oracle runs Karpenter's provisioning scheduler (sigs.k8s.io/karpenter, the version pinned in
// go.mod) in-process on one scenario and prints its decision in the shape `nodefleet plan --output json`
// prints, so the parity harness (test/parity) can compare the two schedulers on the same input.
//
// Usage: oracle [--bench N] < scenario.json > result.json
//
// The scenario format is described in README.md next to this file. Karpenter is used only as a library:
// its fake cloud provider (pkg/cloudprovider/fake) serves the scenario's instance types, a
// controller-runtime fake client holds the Kubernetes objects, and the cluster state (pkg/controllers/state)
// is fed from them the way its informers would. The decision comes from Provisioner.Schedule, which lists
// pending pods, NodePools and DaemonSets, builds the topology and calls Scheduler.Solve.
//
// Bad input: one line on stderr naming the field, exit 1.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/awslabs/operatorpkg/object"
	"github.com/awslabs/operatorpkg/status"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	nodeclaimdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	karpsched "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/test/v1alpha1"
)

// Scenario is one scheduling problem (README.md).
type Scenario struct {
	InstanceTypes []InstanceType     `json:"instanceTypes"`
	NodePools     []v1.NodePool      `json:"nodePools"`
	Nodes         []corev1.Node      `json:"nodes"`
	Pods          []corev1.Pod       `json:"pods"`
	DaemonSets    []appsv1.DaemonSet `json:"daemonSets"`
	// PodDisruptionBudgets are read by the disruption mode (a pod they protect blocks its node).
	PodDisruptionBudgets []policyv1.PodDisruptionBudget `json:"podDisruptionBudgets"`
	Settings             Settings                       `json:"settings"`
	// Disruption, when set, runs Karpenter's disruption methods instead of the provisioner (disruption.go).
	Disruption *DisruptionInput `json:"disruption"`
	// Validity, when set, checks the decisions it holds with kube-scheduler's filters instead (validity.go).
	Validity *ValidityInput `json:"validity"`
	// FakeInstanceTypes, when > 0, adds Karpenter's own fake catalog (fake.InstanceTypes(N)), the one its
	// scheduling benchmark uses.
	FakeInstanceTypes int `json:"fakeInstanceTypes"`
}

// InstanceType is a type as the cloud provider reports it: capacity, overhead (capacity − allocatable),
// labels it sets on its nodes, and its offerings.
type InstanceType struct {
	Name      string              `json:"name"`
	Capacity  corev1.ResourceList `json:"capacity"`
	Overhead  corev1.ResourceList `json:"overhead"`
	Labels    map[string]string   `json:"labels"`
	Offerings []Offering          `json:"offerings"`
}

type Offering struct {
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	Available    bool    `json:"available"`
}

type Settings struct {
	MinValuesPolicy  string `json:"minValuesPolicy"`
	PreferencePolicy string `json:"preferencePolicy"`
	// SpotToSpotConsolidation is Karpenter's feature gate (off unless set).
	SpotToSpotConsolidation *bool `json:"spotToSpotConsolidation"`
}

// Output mirrors `nodefleet plan --output json` (functions/cli/commands/plan.ts PlanOutput).
type Output struct {
	NodeClaims    []OutClaim         `json:"nodeClaims"`
	Placements    []OutPlacement     `json:"placements"`
	Unschedulable []OutUnschedulable `json:"unschedulable"`
	// SolveSeconds is the wall-clock time of Provisioner.Schedule (--solve-only: Scheduler.Solve), median over --bench runs.
	SolveSeconds float64 `json:"solveSeconds"`
	// SolveCPUSeconds is the process CPU time (user + system, all threads) of the same run.
	SolveCPUSeconds float64 `json:"solveCpuSeconds"`
}

type OutClaim struct {
	NodePool            string            `json:"nodePool"`
	Requests            map[string]string `json:"requests"`
	InstanceTypes       []string          `json:"instanceTypes"`
	InstanceTypeOptions int               `json:"instanceTypeOptions"`
	Price               float64           `json:"price"`
	CapacityTypes       []string          `json:"capacityTypes"`
	Zones               []string          `json:"zones"`
	Pods                []string          `json:"pods"`
}

type OutPlacement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

type OutUnschedulable struct {
	Pod     string            `json:"pod"`
	Reasons map[string]string `json:"reasons"`
}

// solveOnlyTiming: --solve-only.
var solveOnlyTiming bool

// maxLaunchTypes is how many types a launch sends (the AWS provider's CreateFleet cut).
const maxLaunchTypes = 60

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "oracle: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	bench := flag.Int("bench", 1, "solve N times and report the median time")
	flag.BoolVar(&solveOnlyTiming, "solve-only", false, "time Scheduler.Solve alone (Karpenter's benchmark measure) instead of Provisioner.Schedule")
	lines := flag.Bool("lines", false, "read one scenario per line, write one result per line ({\"error\": …} for a bad one)")
	fakeTypes := flag.Int("print-fake-instance-types", 0, "print Karpenter's fake.InstanceTypes(N) in the scenario's instanceTypes format and exit")
	benchPods := flag.Int("print-benchmark-pods", 0, "print N pods of Karpenter's scheduling benchmark mix (benchmark.go) and exit")
	flag.Parse()
	log.SetLogger(logging.NopLogger)
	enc := json.NewEncoder(os.Stdout)

	if *fakeTypes > 0 {
		if err := enc.Encode(describeInstanceTypes(fake.InstanceTypes(*fakeTypes))); err != nil {
			fail("writing output: %v", err)
		}
		return
	}
	if *benchPods > 0 {
		if err := enc.Encode(benchmarkPods(*benchPods)); err != nil {
			fail("writing output: %v", err)
		}
		return
	}
	if *lines {
		in := bufio.NewReader(os.Stdin)
		w := bufio.NewWriter(os.Stdout)
		enc := json.NewEncoder(w)
		for {
			line, err := in.ReadBytes('\n')
			if len(strings.TrimSpace(string(line))) > 0 {
				out, runErr := decodeAndRun(line, *bench)
				if runErr != nil {
					_ = enc.Encode(map[string]string{"error": runErr.Error()})
				} else {
					_ = enc.Encode(out)
				}
				if flushErr := w.Flush(); flushErr != nil {
					fail("writing output: %v", flushErr)
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				fail("reading stdin: %v", err)
			}
		}
	}
	data, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fail("reading stdin: %v", err)
	}
	out, err := decodeAndRun(data, *bench)
	if err != nil {
		fail("%v", err)
	}
	if err := enc.Encode(out); err != nil {
		fail("writing output: %v", err)
	}
}

func decodeAndRun(data []byte, bench int) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("karpenter panicked: %v", r)
		}
	}()
	var sc Scenario
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("scenario: %v", err)
	}
	if sc.Validity != nil {
		return runValidity(&sc)
	}
	if sc.Disruption != nil {
		wellKnown(&sc)
		its, err := buildInstanceTypes(&sc)
		if err != nil {
			return nil, err
		}
		return runDisruption(&sc, instanceTypesByName(its), its)
	}
	return run(&sc, bench)
}

// describeInstanceTypes turns cloud-provider instance types back into the scenario format: capacity,
// overhead, the labels their single-valued requirements pin, offerings.
func describeInstanceTypes(its []*cloudprovider.InstanceType) []InstanceType {
	var out []InstanceType
	for _, it := range its {
		t := InstanceType{Name: it.Name, Capacity: it.Capacity, Overhead: it.Overhead.Total(), Labels: map[string]string{}}
		for key, req := range it.Requirements {
			if key == corev1.LabelTopologyZone || key == v1.CapacityTypeLabelKey {
				continue
			}
			if req.Operator() == corev1.NodeSelectorOpIn && req.Len() == 1 {
				t.Labels[key] = req.Any()
			}
		}
		for _, o := range it.Offerings {
			t.Offerings = append(t.Offerings, Offering{
				Zone:         o.Requirements.Get(corev1.LabelTopologyZone).Any(),
				CapacityType: o.Requirements.Get(v1.CapacityTypeLabelKey).Any(),
				Price:        o.Price,
				Available:    o.Available,
			})
		}
		out = append(out, t)
	}
	return out
}

func buildInstanceTypes(sc *Scenario) ([]*cloudprovider.InstanceType, error) {
	var its []*cloudprovider.InstanceType
	if sc.FakeInstanceTypes > 0 {
		its = append(its, fake.InstanceTypes(sc.FakeInstanceTypes)...)
	}
	for i, t := range sc.InstanceTypes {
		if t.Name == "" {
			return nil, fmt.Errorf("instanceTypes[%d].name: missing", i)
		}
		if len(t.Offerings) == 0 {
			return nil, fmt.Errorf("instanceTypes[%d] (%s).offerings: empty", i, t.Name)
		}
		reqs := karpsched.NewRequirements(
			karpsched.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, t.Name),
		)
		keys := make([]string, 0, len(t.Labels))
		for k := range t.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == corev1.LabelTopologyZone || k == v1.CapacityTypeLabelKey || k == corev1.LabelInstanceTypeStable {
				continue
			}
			reqs.Add(karpsched.NewRequirement(k, corev1.NodeSelectorOpIn, t.Labels[k]))
		}
		var offerings cloudprovider.Offerings
		zones, cts := sets.New[string](), sets.New[string]()
		for _, o := range t.Offerings {
			offerings = append(offerings, &cloudprovider.Offering{
				Available: o.Available,
				Price:     o.Price,
				Requirements: karpsched.NewLabelRequirements(map[string]string{
					v1.CapacityTypeLabelKey:  o.CapacityType,
					corev1.LabelTopologyZone: o.Zone,
				}),
			})
			if o.Available {
				zones.Insert(o.Zone)
				cts.Insert(o.CapacityType)
			}
		}
		reqs.Add(karpsched.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, sets.List(zones)...))
		reqs.Add(karpsched.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, sets.List(cts)...))
		its = append(its, &cloudprovider.InstanceType{
			Name:         t.Name,
			Requirements: reqs,
			Offerings:    offerings,
			Capacity:     t.Capacity,
			Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: t.Overhead},
		})
	}
	return its, nil
}

// baseWellKnown is Karpenter's own set of well-known labels, before any scenario added to it.
var baseWellKnown = v1.WellKnownLabels.Clone()

// wellKnown registers the scenario's instance-type label keys as well-known, as a cloud provider does for
// the labels its types carry (the AWS provider registers karpenter.k8s.aws/*); a NodePool need not
// mention them for pods to select them. The keys an earlier scenario added (--lines) are removed first,
// so a scenario's decision does not depend on the ones before it.
func wellKnown(sc *Scenario) {
	for k := range v1.WellKnownLabels.Clone() {
		if !baseWellKnown.Has(k) {
			v1.WellKnownLabels.Delete(k)
		}
	}
	for _, t := range sc.InstanceTypes {
		for k := range t.Labels {
			v1.WellKnownLabels.Insert(k)
		}
	}
}

func podIndex(o client.Object) []string  { return []string{o.(*corev1.Pod).Spec.NodeName} }
func nodeIndex(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }
func claimIndex(o client.Object) []string {
	return []string{o.(*v1.NodeClaim).Status.ProviderID}
}

func run(sc *Scenario, benchRuns int) (*Output, error) {
	ctx := optionsContext(sc, "provisioner")
	wellKnown(sc)
	its, err := buildInstanceTypes(sc)
	if err != nil {
		return nil, err
	}
	byName := instanceTypesByName(its)

	type sample struct{ wall, cpu float64 }
	var samples []sample
	var out *Output
	for i := 0; i < benchRuns; i++ {
		o, secs, err := solveOnce(ctx, sc, its, byName, solveOnlyTiming)
		if err != nil {
			return nil, err
		}
		out = o
		samples = append(samples, sample{secs, o.SolveCPUSeconds})
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i].wall < samples[j].wall })
	out.SolveSeconds = samples[len(samples)/2].wall
	out.SolveCPUSeconds = samples[len(samples)/2].cpu
	return out, nil
}

func instanceTypesByName(its []*cloudprovider.InstanceType) map[string]*cloudprovider.InstanceType {
	byName := map[string]*cloudprovider.InstanceType{}
	for _, it := range its {
		byName[it.Name] = it
	}
	return byName
}

// optionsContext is the context Karpenter's controllers read their options from, named after the controller.
func optionsContext(sc *Scenario, controller string) context.Context {
	return options.ToContext(injection.WithControllerName(context.Background(), controller), scenarioOptions(sc.Settings))
}

func scenarioOptions(s Settings) *options.Options {
	f := test.OptionsFields{}
	if s.MinValuesPolicy != "" {
		p := options.MinValuesPolicy(s.MinValuesPolicy)
		f.MinValuesPolicy = &p
	}
	if s.PreferencePolicy != "" {
		p := options.PreferencePolicy(s.PreferencePolicy)
		f.PreferencePolicy = &p
	}
	if s.SpotToSpotConsolidation != nil {
		f.FeatureGates.SpotToSpotConsolidation = s.SpotToSpotConsolidation
	}
	// test.Options keeps Karpenter's test default of 5 solver workers, the figure its benchmark uses.
	return test.Options(f)
}

func solveOnce(ctx context.Context, sc *Scenario, its []*cloudprovider.InstanceType, byName map[string]*cloudprovider.InstanceType, solveOnly bool) (*Output, float64, error) {
	clk := clock.RealClock{}
	kube, cp, cluster, err := load(ctx, sc, its, clk, nil)
	if err != nil {
		return nil, 0, err
	}
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov := provisioning.NewProvisioner(kube, recorder, cp, cluster, clk, nil, nil)
	if !solveOnly {
		cpu0 := cpuSeconds()
		start := time.Now()
		results, err := prov.Schedule(ctx)
		secs := time.Since(start).Seconds()
		cpu := cpuSeconds() - cpu0
		if err != nil {
			return nil, 0, fmt.Errorf("scheduling: %v", err)
		}
		out := toOutput(results, byName)
		out.SolveCPUSeconds = cpu
		return out, secs, nil
	}
	// Benchmark: time Scheduler.Solve alone, as Karpenter's scheduling benchmark does, on a scheduler
	// the provisioner builds (NodePools, instance types, topology, daemonset overhead) from the same
	// state, with Provisioner.Schedule's options.
	pods, err := prov.GetPendingPods(ctx)
	if err != nil {
		return nil, 0, err
	}
	opts := []scheduling.Options{
		scheduling.DisableReservedCapacityFallback,
		scheduling.NumConcurrentReconciles(int(math.Ceil(float64(options.FromContext(ctx).CPURequests) / 1000.0))),
		scheduling.MinValuesPolicy(options.FromContext(ctx).MinValuesPolicy),
	}
	if options.FromContext(ctx).PreferencePolicy == options.PreferencePolicyIgnore {
		opts = append(opts, scheduling.IgnorePreferences)
	}
	s, err := prov.NewScheduler(ctx, pods, cluster.DeepCopyNodes().Active(), sets.New[types.UID](), opts...)
	if err != nil {
		return nil, 0, fmt.Errorf("scheduling: %v", err)
	}
	cpu0 := cpuSeconds()
	start := time.Now()
	results, err := s.Solve(ctx, pods)
	secs := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpu0
	if err != nil {
		return nil, 0, fmt.Errorf("scheduling: %v", err)
	}
	results = results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes)
	out := toOutput(results, byName)
	out.SolveCPUSeconds = cpu
	return out, secs, nil
}

// cpuSeconds is this process's CPU time so far (user + system, all threads).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func podName(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

var capacityTypeOrder = map[string]int{v1.CapacityTypeReserved: 0, v1.CapacityTypeSpot: 1, v1.CapacityTypeOnDemand: 2}

func toOutput(r scheduling.Results, byName map[string]*cloudprovider.InstanceType) *Output {
	out := &Output{NodeClaims: []OutClaim{}, Placements: []OutPlacement{}, Unschedulable: []OutUnschedulable{}}
	for _, nc := range r.NewNodeClaims {
		out.NodeClaims = append(out.NodeClaims, outClaim(nc, byName))
	}
	for _, en := range r.ExistingNodes {
		for _, p := range en.Pods {
			out.Placements = append(out.Placements, OutPlacement{Pod: podName(p), Node: en.Name()})
		}
	}
	sort.Slice(out.Placements, func(i, j int) bool { return out.Placements[i].Pod < out.Placements[j].Pod })
	for p, err := range r.PodErrors {
		out.Unschedulable = append(out.Unschedulable, OutUnschedulable{Pod: podName(p), Reasons: map[string]string{"karpenter": err.Error()}})
	}
	sort.Slice(out.Unschedulable, func(i, j int) bool { return out.Unschedulable[i].Pod < out.Unschedulable[j].Pod })
	return out
}

// claimRequests is the sum of the claim's pods' requests plus its daemon overhead, as the NodeClaim
// will carry them once created.
func claimRequests(nc *scheduling.NodeClaim) corev1.ResourceList {
	nodeClaim := nc.ToNodeClaim()
	if nodeClaim.Spec.Resources.Requests != nil {
		return nodeClaim.Spec.Resources.Requests
	}
	return corev1.ResourceList{}
}

// load puts the scenario's objects into a controller-runtime fake client and Karpenter's cluster state,
// as the API server and Karpenter's informers would hold them. dn == nil (scheduling): every node was
// created an hour ago. dn != nil (disruption, disruption.go): nodes and pods keep their scenario times,
// NodeClaims carry their lifecycle conditions at the node's creation time and the last pod event time,
// and Karpenter's NodeClaim disruption controller sets Consolidatable / Drifted on them at dn.now.
func load(ctx context.Context, sc *Scenario, its []*cloudprovider.InstanceType, clk clock.Clock, dn *disruptionClock) (client.Client, *fake.CloudProvider, *state.Cluster, error) {
	builder := fakecr.NewClientBuilder().
		WithScheme(scheme.Scheme).
		WithIndex(&corev1.Pod{}, "spec.nodeName", podIndex).
		WithIndex(&corev1.Node{}, "spec.providerID", nodeIndex).
		WithIndex(&v1.NodeClaim{}, "status.providerID", claimIndex)
	if dn != nil {
		// The NodeClaim disruption controller writes its conditions through the status subresource.
		builder = builder.WithStatusSubresource(&v1.NodeClaim{})
	}
	kube := builder.Build()
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = its
	cluster := state.NewCluster(clk, kube, cp)

	nodeClass := &v1alpha1.TestNodeClass{}
	gvk := object.GVK(nodeClass)
	// A NodeClaim gets its NodePool's terminationGracePeriod when it is created (as Karpenter's
	// provisioner copies the template), so eventual disruption sees the claim's drain bound.
	gracePeriods := map[string]*metav1.Duration{}
	for i := range sc.NodePools {
		np := sc.NodePools[i].DeepCopy()
		gracePeriods[np.Name] = np.Spec.Template.Spec.TerminationGracePeriod
		if np.Name == "" {
			return nil, nil, nil, fmt.Errorf("nodePools[%d].metadata.name: missing", i)
		}
		// The fake cloud provider manages NodePools that reference its test node class.
		name := "default"
		if np.Spec.Template.Spec.NodeClassRef != nil && np.Spec.Template.Spec.NodeClassRef.Name != "" {
			name = np.Spec.Template.Spec.NodeClassRef.Name
		}
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: gvk.Group, Kind: gvk.Kind, Name: name}
		np.StatusConditions().SetTrue(v1.ConditionTypeValidationSucceeded)
		np.StatusConditions().SetTrue(v1.ConditionTypeNodeClassReady)
		np.StatusConditions().SetUnknown(v1.ConditionTypeNodeRegistrationHealthy)
		if err := kube.Create(ctx, np); err != nil {
			return nil, nil, nil, fmt.Errorf("nodePools[%d] (%s): %v", i, np.Name, err)
		}
	}
	for i := range sc.DaemonSets {
		ds := sc.DaemonSets[i].DeepCopy()
		if ds.Namespace == "" {
			ds.Namespace = "default"
		}
		if err := kube.Create(ctx, ds); err != nil {
			return nil, nil, nil, fmt.Errorf("daemonSets[%d] (%s): %v", i, ds.Name, err)
		}
		if err := cluster.UpdateDaemonSet(ctx, ds); err != nil {
			return nil, nil, nil, fmt.Errorf("daemonSets[%d] (%s): %v", i, ds.Name, err)
		}
	}
	for i := range sc.PodDisruptionBudgets {
		pdb := sc.PodDisruptionBudgets[i].DeepCopy()
		if pdb.Namespace == "" {
			pdb.Namespace = "default"
		}
		if err := kube.Create(ctx, pdb); err != nil {
			return nil, nil, nil, fmt.Errorf("podDisruptionBudgets[%d] (%s): %v", i, pdb.Name, err)
		}
	}
	now := metav1.NewTime(time.Now().Add(-time.Hour))
	if dn != nil {
		now = metav1.NewTime(dn.now.Add(-time.Hour))
	}
	var claims []string
	for i := range sc.Nodes {
		node := sc.Nodes[i].DeepCopy()
		if node.Name == "" {
			return nil, nil, nil, fmt.Errorf("nodes[%d].metadata.name: missing", i)
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		if node.Spec.ProviderID == "" {
			node.Spec.ProviderID = "fake:///" + node.Name
		}
		created := now
		if dn != nil && !node.CreationTimestamp.IsZero() {
			created = node.CreationTimestamp
		}
		node.CreationTimestamp = created
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: created, LastTransitionTime: created}}
		pool, managed := node.Labels[v1.NodePoolLabelKey]
		if managed {
			node.Labels[v1.NodeRegisteredLabelKey] = "true"
			node.Labels[v1.NodeInitializedLabelKey] = "true"
			nc := &v1.NodeClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name:              node.Name,
					Labels:            map[string]string{v1.NodePoolLabelKey: pool},
					CreationTimestamp: created,
				},
				Spec: v1.NodeClaimSpec{
					NodeClassRef:           &v1.NodeClassReference{Group: gvk.Group, Kind: gvk.Kind, Name: "default"},
					Taints:                 node.Spec.Taints,
					TerminationGracePeriod: gracePeriods[pool],
				},
				Status: v1.NodeClaimStatus{
					ProviderID:  node.Spec.ProviderID,
					NodeName:    node.Name,
					Capacity:    node.Status.Capacity,
					Allocatable: node.Status.Allocatable,
				},
			}
			for k, v := range node.Labels {
				nc.Labels[k] = v
			}
			lifecycle := nc.StatusConditions()
			if dn != nil {
				// Launched, registered and initialized when the node was created; the last pod event is the
				// latest start of a pod bound to it, as the pod-events controller would have recorded it.
				lifecycle = nc.StatusConditions(status.WithClock(clocktesting.NewFakeClock(created.Time)))
				nc.Status.LastPodEventTime = lastPodEvent(sc.Pods, node.Name)
			}
			lifecycle.SetTrue(v1.ConditionTypeLaunched)
			lifecycle.SetTrue(v1.ConditionTypeRegistered)
			lifecycle.SetTrue(v1.ConditionTypeInitialized)
			if err := kube.Create(ctx, nc); err != nil {
				return nil, nil, nil, fmt.Errorf("nodes[%d] (%s): nodeclaim: %v", i, node.Name, err)
			}
			claims = append(claims, nc.Name)
		}
		if err := kube.Create(ctx, node); err != nil {
			return nil, nil, nil, fmt.Errorf("nodes[%d] (%s): %v", i, node.Name, err)
		}
	}
	for i := range sc.Pods {
		pod := sc.Pods[i].DeepCopy()
		if pod.Name == "" {
			return nil, nil, nil, fmt.Errorf("pods[%d].metadata.name: missing", i)
		}
		if pod.Namespace == "" {
			pod.Namespace = "default"
		}
		if pod.UID == "" {
			pod.UID = types.UID(pod.Namespace + "/" + pod.Name)
		}
		if pod.Spec.NodeName == "" {
			pod.Status.Phase = corev1.PodPending
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		} else {
			pod.Status.Phase = corev1.PodRunning
		}
		if err := kube.Create(ctx, pod); err != nil {
			return nil, nil, nil, fmt.Errorf("pods[%d] (%s): %v", i, pod.Name, err)
		}
	}
	if dn != nil {
		// Karpenter's NodeClaim disruption controller marks Consolidatable (consolidateAfter passed since
		// the last pod event) and Drifted, and writes them through the status subresource.
		ncDisruption := nodeclaimdisruption.NewController(dn, kube, cp)
		for _, name := range claims {
			nc := &v1.NodeClaim{}
			if err := kube.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
				return nil, nil, nil, err
			}
			if _, err := ncDisruption.Reconcile(ctx, nc); err != nil {
				return nil, nil, nil, fmt.Errorf("nodeclaim %s: disruption conditions: %v", name, err)
			}
		}
	}
	for _, name := range claims {
		nc := &v1.NodeClaim{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
			return nil, nil, nil, err
		}
		cluster.UpdateNodeClaim(nc)
	}
	for i := range sc.Nodes {
		node := &corev1.Node{}
		if err := kube.Get(ctx, client.ObjectKey{Name: sc.Nodes[i].Name}, node); err != nil {
			return nil, nil, nil, err
		}
		if err := cluster.UpdateNode(ctx, node); err != nil {
			return nil, nil, nil, fmt.Errorf("nodes[%d] (%s): %v", i, node.Name, err)
		}
	}
	podList := &corev1.PodList{}
	if err := kube.List(ctx, podList); err != nil {
		return nil, nil, nil, err
	}
	for i := range podList.Items {
		if err := cluster.UpdatePod(ctx, &podList.Items[i]); err != nil {
			return nil, nil, nil, fmt.Errorf("pod %s: %v", podList.Items[i].Name, err)
		}
	}
	if !cluster.Synced(ctx) {
		return nil, nil, nil, fmt.Errorf("cluster state did not sync with the scenario's objects")
	}
	return kube, cp, cluster, nil
}

// outClaim is a NodeClaim the scheduler (or a disruption replacement) would create: its launchable types
// cheapest compatible offering first, cut at maxLaunchTypes.
func outClaim(nc *scheduling.NodeClaim, byName map[string]*cloudprovider.InstanceType) OutClaim {
	type priced struct {
		name  string
		price float64
	}
	var options []priced
	for _, it := range nc.InstanceTypeOptions {
		best := math.Inf(1)
		for _, o := range it.Offerings.Available().Compatible(nc.Requirements) {
			best = math.Min(best, o.Price)
		}
		if !math.IsInf(best, 1) {
			options = append(options, priced{it.Name, best})
		}
	}
	sort.SliceStable(options, func(i, j int) bool {
		if options[i].price != options[j].price {
			return options[i].price < options[j].price
		}
		return options[i].name < options[j].name
	})
	claim := OutClaim{NodePool: nc.NodePoolName, InstanceTypeOptions: len(nc.InstanceTypeOptions), Requests: map[string]string{}}
	for i, o := range options {
		if i == maxLaunchTypes {
			break
		}
		claim.InstanceTypes = append(claim.InstanceTypes, o.name)
	}
	if len(options) > 0 {
		claim.Price = options[0].price
	}
	for k, q := range nc.Spec.Resources.Requests {
		claim.Requests[string(k)] = q.String()
	}
	if len(nc.Spec.Resources.Requests) == 0 {
		for k, q := range claimRequests(nc) {
			claim.Requests[string(k)] = q.String()
		}
	}
	if ct := nc.Requirements.Get(v1.CapacityTypeLabelKey); ct != nil {
		claim.CapacityTypes = ct.Values()
		sort.Slice(claim.CapacityTypes, func(i, j int) bool {
			return capacityTypeOrder[claim.CapacityTypes[i]] < capacityTypeOrder[claim.CapacityTypes[j]]
		})
	}
	if z := nc.Requirements.Get(corev1.LabelTopologyZone); z != nil {
		claim.Zones = z.Values()
		sort.Strings(claim.Zones)
	}
	for _, p := range nc.Pods {
		claim.Pods = append(claim.Pods, podName(p))
	}
	return claim
}
