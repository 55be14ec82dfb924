package main

// The bench protocol shared by the peer drivers (each module keeps its own copy: two
// independent modules, no replace directives).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

var stdin = bufio.NewReader(os.Stdin)

// readObjects reads the JSON list of object manifests the bench wrote.
func readObjects(path string) ([]map[string]any, error) {
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

// phase reports one phase as a JSON line and waits for the bench's go-ahead (one line on
// stdin), so the bench can read the audit log between phases.
func phase(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
	_, _ = stdin.ReadString('\n')
}
