// Package protocol is what the peer drivers share: their flags, the objects file the bench
// writes, and the phase protocol (one JSON line per phase, then a line on stdin to go on).
// Standard library only, so each driver keeps its own Kubernetes versions; the drivers
// require it through a `replace` to this directory.
package protocol

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// Flags are the command line every driver takes from bench/bench_peers.py.
type Flags struct {
	Kubeconfig string
	Namespace  string
	Objects    string
	QPS        float32 // client-go: a negative QPS disables its token bucket
}

// ParseFlags reads the drivers' common command line.
func ParseFlags() Flags {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the control plane")
	namespace := flag.String("namespace", "", "namespace to apply the objects into")
	objects := flag.String("objects", "", "JSON file: a list of object manifests")
	qps := flag.Float64("qps", -1, "client-side QPS (-1: no client-side limit)")
	flag.Parse()
	return Flags{Kubeconfig: *kubeconfig, Namespace: *namespace, Objects: *objects, QPS: float32(*qps)}
}

// Exit ends the driver: status 1 with the error on stderr, prefixed by the driver's name.
func Exit(driver string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, driver+":", err)
		os.Exit(1)
	}
}

var stdin = bufio.NewReader(os.Stdin)

// ReadObjects reads the JSON list of object manifests the bench wrote.
func ReadObjects(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objects []map[string]any
	if err := json.Unmarshal(data, &objects); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objects, nil
}

// Phase reports one phase as a JSON line and waits for the bench's go-ahead (one line on
// stdin), so the bench can read the audit log between phases.
func Phase(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
	_, _ = stdin.ReadString('\n')
}
