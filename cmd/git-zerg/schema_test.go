package main

import (
	"encoding/json"
	"testing"

	"github.com/git-zerg/git-zerg/levels"
)

// The demo is a newcomer's first graph: it plans without a warning.
func TestDemoGraphHasNoWarnings(t *testing.T) {
	data, err := json.Marshal(demoGraph())
	if err != nil {
		t.Fatal(err)
	}
	_, errs, warns := levels.Check(data)
	for _, p := range append(errs, warns...) {
		t.Errorf("demo graph: %s", p)
	}
}
