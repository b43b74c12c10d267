package state

import (
	"slices"
	"testing"
)

// statusTable is every status against every predicate, as their comments
// document them. A status missing here fails TestEveryStatusClassified.
var statusTable = map[Status]struct{ settled, atRest, claimable, holding, begun, stopped, hasWork bool }{
	Pending:  {claimable: true},
	Claimed:  {holding: true, begun: true},
	Verified: {atRest: true, holding: true, begun: true, hasWork: true},
	Done:     {settled: true, atRest: true, begun: true, hasWork: true},
	Failed:   {claimable: true, stopped: true},
	Blocked:  {settled: true, atRest: true, stopped: true},
}

func TestStatusPredicates(t *testing.T) {
	for _, st := range Statuses {
		want, ok := statusTable[st]
		if !ok {
			t.Errorf("status %s is not in the test's table", st)
			continue
		}
		for _, p := range []struct {
			name      string
			got, want bool
		}{
			{"Settled", st.Settled(), want.settled},
			{"AtRest", st.AtRest(), want.atRest},
			{"Claimable", st.Claimable(), want.claimable},
			{"Holding", st.Holding(), want.holding},
			{"Begun", st.Begun(), want.begun},
			{"Stopped", st.Stopped(), want.stopped},
			{"HasWork", st.HasWork(), want.hasWork},
		} {
			if p.got != p.want {
				t.Errorf("%s.%s() = %v, want %v", st, p.name, p.got, p.want)
			}
		}
	}
	// A status git-zerg does not know (a stored blob from elsewhere, a
	// missing dependency's "") is in no set.
	for _, st := range []Status{"", "nonsense"} {
		if st.Settled() || st.AtRest() || st.Claimable() || st.Holding() || st.Begun() || st.Stopped() || st.HasWork() {
			t.Errorf("unknown status %q is in a set", st)
		}
	}
}

// TestEveryStatusClassified fails when a Status constant is declared
// without being listed in Statuses, given its row of statusSets, and
// checked by the test's table: the one place a new status must be placed.
func TestEveryStatusClassified(t *testing.T) {
	var declared []Status
	for _, s := range declaredConsts(t, "state.go", "Status") {
		declared = append(declared, Status(s))
	}
	if len(declared) == 0 {
		t.Fatal("no Status constants found in state.go")
	}
	for _, st := range declared {
		if !slices.Contains(Statuses, st) {
			t.Errorf("status %s is not in Statuses", st)
		}
		// Every status is in at least one set, so a status without a case
		// in statusSets is caught here.
		if statusSets(st) == 0 {
			t.Errorf("status %s has no case in statusSets", st)
		}
		if _, ok := statusTable[st]; !ok {
			t.Errorf("status %s has no row in the test's statusTable", st)
		}
	}
	if len(Statuses) != len(declared) || len(statusTable) != len(declared) {
		t.Errorf("%d statuses declared, %d in Statuses, %d in statusTable",
			len(declared), len(Statuses), len(statusTable))
	}
}
