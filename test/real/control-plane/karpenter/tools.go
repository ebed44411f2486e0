//go:build tools

// Package tools pins the command this module builds: Karpenter's controller with its kwok cloud
// provider (sigs.k8s.io/karpenter/kwok), at the release the scheduling oracle pins
// (test/oracle/karpenter/go.mod).
package tools

import _ "sigs.k8s.io/karpenter/kwok"
