package main

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchmarkPods builds the pod mix of Karpenter's scheduling benchmark
// (pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go, a test file, so not importable):
// a fifth each of plain pods, zonal topology spread, hostname topology spread, zonal self-affinity and
// hostname anti-affinity (all sharing one label, so at most one per node), the remainder plain; cpu one
// of 100m/250m/500m/1/1.5, memory one of 100Mi/256Mi/512Mi/1Gi/2Gi/4Gi; label values from a–g. Draws come
// from math/rand seeded with 42 in the same order as the benchmark's, so a fresh process yields the
// benchmark's first run. Written for nodefleet from the benchmark's description.
func benchmarkPods(count int) []corev1.Pod {
	r := rand.New(rand.NewSource(42)) //nolint:gosec // reproducible workload, not security
	value := func() string { return []string{"a", "b", "c", "d", "e", "f", "g"}[r.Intn(7)] }
	cpu := func() resource.Quantity {
		return resource.MustParse(fmt.Sprintf("%dm", []int{100, 250, 500, 1000, 1500}[r.Intn(5)]))
	}
	mem := func() resource.Quantity {
		return resource.MustParse(fmt.Sprintf("%dMi", []int{100, 256, 512, 1024, 2048, 4096}[r.Intn(6)]))
	}
	var pods []corev1.Pod
	add := func(labels map[string]string, affinity *corev1.Affinity, tsc []corev1.TopologySpreadConstraint) {
		c, m := cpu(), mem()
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%05d", len(pods)), Namespace: "default", Labels: labels},
			Spec: corev1.PodSpec{
				Affinity:                  affinity,
				TopologySpreadConstraints: tsc,
				Containers: []corev1.Container{{
					Name:      "app",
					Image:     "registry.k8s.io/pause:3.9",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: c, corev1.ResourceMemory: m}},
				}},
			},
		})
	}
	generic := func(n int) {
		for i := 0; i < n; i++ {
			add(map[string]string{"my-label": value()}, nil, nil)
		}
	}
	spread := func(n int, key string) {
		for i := 0; i < n; i++ {
			labels := map[string]string{"my-label": value()}
			selector := map[string]string{"my-label": value()}
			add(labels, nil, []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
			}})
		}
	}
	affinity := func(n int, key string) {
		for i := 0; i < n; i++ {
			labels := map[string]string{"my-affininity": value()}
			add(labels, &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: key,
				}},
			}}, nil)
		}
	}
	anti := func(n int, key string) {
		labels := map[string]string{"app": "nginx"}
		for i := 0; i < n; i++ {
			add(labels, &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: key,
				}},
			}}, nil)
		}
	}
	fifth := count / 5
	generic(fifth)
	spread(fifth, corev1.LabelTopologyZone)
	spread(fifth, corev1.LabelHostname)
	affinity(fifth, corev1.LabelTopologyZone)
	anti(fifth, corev1.LabelHostname)
	generic(count - len(pods))
	return pods
}
