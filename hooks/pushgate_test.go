package hooks

import (
	"reflect"
	"testing"
)

// TestNewestStaging: of the staging merges a push sends, only those no
// other sent merge contains are judged; a merge that a later one contains
// (a batch's first merges, an earlier tip whose gates failed) is not,
// however the history between them goes.
func TestNewestStaging(t *testing.T) {
	// Children before parents, as rev-list --topo-order prints them:
	//   top (the user's merge) -> m3, feat
	//   m3 (merge of T3) -> m2, w3;  m2 -> m1, w2;  m1 -> base, w1
	//   feat -> other (merge of U1 into another feature's staging) -> b2, u1
	sent := []sentCommit{
		{hash: "top", subject: "Merge branch 'zerg/f/staging'", parents: []string{"m3", "feat"}},
		{hash: "feat", subject: "my work", parents: []string{"other"}},
		{hash: "other", subject: "merge U1 into staging", parents: []string{"b2", "u1"}},
		{hash: "m3", subject: "merge T3 into staging", parents: []string{"m2", "w3"}},
		{hash: "w3", subject: "T3 work", parents: []string{"base"}},
		{hash: "m2", subject: "merge T2 into staging", parents: []string{"m1", "w2"}},
		{hash: "w2", subject: "merge T9 into staging", parents: []string{"base"}}, // one parent: not git-zerg's
		{hash: "m1", subject: "merge T1 into staging", parents: []string{"base", "w1"}},
	}
	var got []string
	for _, c := range newestStaging(sent) {
		got = append(got, c.hash)
	}
	if want := []string{"other", "m3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("newestStaging = %v, want %v", got, want)
	}
}

func TestIsStagingMerge(t *testing.T) {
	for _, c := range []struct {
		subject string
		parents int
		want    bool
	}{
		{"merge T1 into staging", 2, true},
		{"merge auth-login.2 into staging", 2, true},
		{"merge T1 into staging", 1, false},
		{"merge T1 into staging", 3, false},
		{"merge  into staging", 2, false},
		{"merge T1 T2 into staging", 2, false},
		{"Merge branch 'zerg/f/staging'", 2, false},
		{"merge T1 into staging!", 2, false},
	} {
		if got := isStagingMerge(c.subject, c.parents); got != c.want {
			t.Errorf("isStagingMerge(%q, %d) = %v, want %v", c.subject, c.parents, got, c.want)
		}
	}
}
