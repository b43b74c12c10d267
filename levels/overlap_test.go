package levels

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sameGlobGraph is the worst case for ownership clashes: every task writes
// the same glob, so each overlaps every other and they run one by one.
func sameGlobGraph(n int) []byte {
	var tasks []string
	for i := range n {
		tasks = append(tasks, tk(fmt.Sprintf("T%04d", i), files("modify", "**/*.go")))
	}
	return doc(tasks...)
}

func BenchmarkValidateOverlap(b *testing.B) {
	data := sameGlobGraph(2000)
	b.ReportAllocs()
	for b.Loop() {
		p, errs := Load(data)
		if len(errs) > 0 {
			b.Fatal(strs(errs)[0])
		}
		_ = p
	}
}

func TestOverlapWarningsGrouped(t *testing.T) {
	const n = 3000
	start := time.Now()
	plan, errs := Load(sameGlobGraph(n))
	took := time.Since(start)
	if len(errs) > 0 {
		t.Fatal(strs(errs)[0])
	}
	want := []string{`tasks[1].files.modify[0]: T0001, T0002, T0003 and 2996 more write "**/*.go", which overlaps what T0000, T0001, T0002 and 2996 more write; each now runs after the tasks it overlaps (4498500 overlaps in all)`}
	if got := strs(plan.Warnings); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got[:min(len(got), 5)], "\n"), strings.Join(want, "\n"))
	}
	if len(plan.Levels) != n {
		t.Errorf("%d levels, want %d", len(plan.Levels), n)
	}
	// A chain, not every earlier writer: the plan stays linear in size.
	edges := 0
	for _, ids := range plan.Implied {
		edges += len(ids)
	}
	if edges != n-1 {
		t.Errorf("%d implied edges, want %d", edges, n-1)
	}
	// Its speed is BenchmarkValidateOverlap's to show: a time limit here
	// would measure the machine.
	t.Logf("Load of %d tasks writing one glob: %v", n, took)
}

// A few clashes over one path are told one by one; past that they are one
// line naming the first tasks on either side.
func TestOverlapWarningsThreshold(t *testing.T) {
	plan, errs := Load(doc(tk("A", files("modify", "x")), tk("B", files("modify", "x")),
		tk("C", files("modify", "x")), tk("D", files("create", "x")), tk("E", files("create", "y"))))
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	want := []string{`tasks[1].files.modify[0]: B, C and D write "x", which overlaps what A, B and C write; each now runs after the tasks it overlaps (6 overlaps in all)`}
	if got := strs(plan.Warnings); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := plan.Implied; len(got) != 3 || len(got["D"]) != 1 || got["D"][0] != "C" {
		t.Errorf("Implied = %q, want a chain", got)
	}
}
