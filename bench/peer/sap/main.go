// Command sap drives github.com/sap/component-operator-runtime's pkg/reconciler for
// bench/bench_reconciler.py: the same objects, on the same control plane, as our reconciler
// and kubectl. Written for this project's bench; it only calls the library's public API.
//
// Protocol (line-based, so the bench can take audit-log offsets between the phases): the
// driver prints one JSON line per phase and, after each, waits for a line on stdin.
//
//	{"phase":"loaded"}                    objects read, clients built, nothing sent yet
//	{"phase":"first","seconds":s,...}    Apply looped until every item is Creating or Ready
//	{"phase":"converged","calls":n}      Apply looped until it returned true (the bench made
//	                                      the Deployments Available in between)
//	{"phase":"noop","seconds":s,"done":b} one more Apply: the no-op reconcile
package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"oam-operator.dev/bench/peer/protocol"

	"github.com/sap/component-operator-runtime/pkg/cluster"
	"github.com/sap/component-operator-runtime/pkg/reconciler"
)

const userAgent = "oam-bench-sap/v0.3.99"

func main() {
	protocol.Exit("sap", run(protocol.ParseFlags()))
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
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return err
	}
	ctrlClient, err := client.New(config, client.Options{Scheme: scheme, HTTPClient: httpClient})
	if err != nil {
		return err
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfigAndClient(config, httpClient)
	if err != nil {
		return err
	}
	// Events are posted for real (the library records one per created object), so the
	// audit log sees what a controller built on it would send.
	coreClient, err := typedcorev1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: coreClient.Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: "oam-bench-sap"})
	clnt := cluster.NewClient(ctrlClient, discoveryClient, recorder, config, httpClient)

	manifests, err := protocol.ReadObjects(flags.Objects)
	if err != nil {
		return err
	}
	objects := make([]client.Object, 0, len(manifests))
	for _, m := range manifests {
		objects = append(objects, &unstructured.Unstructured{Object: m})
	}
	policy := reconciler.UpdatePolicySsaMerge
	r := reconciler.NewReconciler("oam-bench-sap.dev", clnt, reconciler.ReconcilerOptions{UpdatePolicy: &policy})
	inventory := make([]*reconciler.InventoryItem, 0)
	ownerID := "bench/" + namespace + "/sap"
	apply := func() (bool, error) {
		return r.Apply(ctx, &inventory, objects, namespace, ownerID, "bench")
	}

	protocol.Phase(map[string]any{"phase": "loaded"})
	started := time.Now()
	calls := 0
	for {
		calls++
		if _, err := apply(); err != nil {
			return err
		}
		if len(inventory) == len(objects) && allCreatingOrReady(inventory) {
			break
		}
	}
	protocol.Phase(map[string]any{"phase": "first", "seconds": time.Since(started).Seconds(), "calls": calls})

	calls = 0
	for {
		calls++
		done, err := apply()
		if err != nil {
			return err
		}
		if done {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	protocol.Phase(map[string]any{"phase": "converged", "calls": calls})

	started = time.Now()
	done, err := apply()
	if err != nil {
		return err
	}
	protocol.Phase(map[string]any{"phase": "noop", "seconds": time.Since(started).Seconds(), "done": done})
	return nil
}

func allCreatingOrReady(inventory []*reconciler.InventoryItem) bool {
	for _, item := range inventory {
		if item.Phase != reconciler.PhaseCreating && item.Phase != reconciler.PhaseReady {
			return false
		}
	}
	return true
}
