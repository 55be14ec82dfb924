// Command flux drives github.com/fluxcd/pkg/ssa's ResourceManager.ApplyAllStaged for
// bench/bench_reconciler.py: the same objects, on the same control plane, as our reconciler
// and kubectl. Written for this project's bench; it only calls the library's public API.
//
// Protocol: bench/peer/protocol (one JSON line per phase, then a line on stdin to go on).
//
//	{"phase":"loaded"}
//	{"phase":"first","seconds":s}   one ApplyAllStaged: creates everything
//	{"phase":"converged"}           nothing to do: ApplyAllStaged does not wait for health
//	{"phase":"noop","seconds":s,"done":true,"changed":n}  ApplyAllStaged again, all in sync
package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"oam-operator.dev/bench/peer/protocol"

	"github.com/fluxcd/pkg/ssa"
)

const userAgent = "oam-bench-flux/v0.78.0"

// concurrency of the drift checks (dry-run applies), as our reconciler's 8.
const concurrency = 8

func main() {
	protocol.Exit("flux", run(protocol.ParseFlags()))
}

func run(flags protocol.Flags) error {
	namespace := flags.Namespace
	ctx := context.Background()
	config, err := clientcmd.BuildConfigFromFlags("", flags.Kubeconfig)
	if err != nil {
		return err
	}
	config.UserAgent = userAgent
	config.QPS = flags.QPS
	config.Burst = 1
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	kubeClient, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	manager := ssa.NewResourceManager(kubeClient, nil, ssa.Owner{Field: "oam-bench-flux", Group: "oam-bench-flux.dev"})
	manager.SetConcurrency(concurrency)

	manifests, err := protocol.ReadObjects(flags.Objects)
	if err != nil {
		return err
	}
	objects := make([]*unstructured.Unstructured, 0, len(manifests))
	for _, m := range manifests {
		object := &unstructured.Unstructured{Object: m}
		object.SetNamespace(namespace) // Flux sets the target namespace before applying
		objects = append(objects, object)
	}
	manager.SetOwnerLabels(objects, "bench", namespace)
	apply := func() (*ssa.ChangeSet, error) {
		// Deep copies: ApplyAllStaged may normalise the objects it is given.
		copies := make([]*unstructured.Unstructured, len(objects))
		for i, o := range objects {
			copies[i] = o.DeepCopy()
		}
		return manager.ApplyAllStaged(ctx, copies, ssa.DefaultApplyOptions())
	}

	protocol.Phase(map[string]any{"phase": "loaded"})
	started := time.Now()
	if _, err := apply(); err != nil {
		return err
	}
	protocol.Phase(map[string]any{"phase": "first", "seconds": time.Since(started).Seconds(), "calls": 1})
	protocol.Phase(map[string]any{"phase": "converged", "calls": 0})
	started = time.Now()
	changeSet, err := apply()
	if err != nil {
		return err
	}
	changed := 0
	for _, entry := range changeSet.Entries {
		if entry.Action != ssa.UnchangedAction {
			changed++
		}
	}
	protocol.Phase(map[string]any{"phase": "noop", "seconds": time.Since(started).Seconds(), "done": changed == 0, "changed": changed})
	return nil
}
