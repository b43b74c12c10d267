package engine

import (
	"fmt"
	"sort"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// hostClash refuses a claim when another clone presents this clone's host
// name (a copy of this one that kept its .git/zerg/host-id, or ZERG_HOST
// given twice): the two would take each other's workers for their own, and
// every task would run on both. A copy beside its original knows it from
// the original's host-id; anywhere else, from a lease of the other in the
// state.
func hostClash(host gitstore.HostIdentity, ws map[string]*state.Worker) error {
	if host.Err != nil {
		return &Error{Kind: Refused, What: "claim refused", Why: "this clone has no host identity of its own: " + host.Err.Error(),
			Hint: "set ZERG_HOST to a name no other clone uses", Err: host.Err}
	}
	if host.Twin {
		return &Error{Kind: Refused, What: "claim refused",
			Why:  fmt.Sprintf("this clone is a copy of the clone in %s: both present host identity %s", host.MadeIn, host.Name),
			Hint: "delete .git/zerg/host-id here (a new identity is made), or set ZERG_HOST to a name of its own"}
	}
	names := make([]string, 0, len(ws))
	for name := range ws {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w := ws[name]
		if !host.Clash(w) {
			continue
		}
		hint := "a copy of a clone (cp -r, a copied disk or image) keeps its .git/zerg/host-id: delete that file in the copy " +
			"(it makes a new identity), or give each clone a ZERG_HOST of its own"
		if host.MadeIn != "" {
			hint = fmt.Sprintf("this clone's .git/zerg/host-id was made in %s: if this clone is a copy of that one, "+
				"delete .git/zerg/host-id here (a new identity is made), or set ZERG_HOST to a name of its own", host.MadeIn)
		}
		return &Error{Kind: Refused, What: "claim refused",
			Why:  fmt.Sprintf("another clone presents this clone's host identity %s: the lease of %s on %s was not made here", host.Name, w.Name, w.Task),
			Hint: hint}
	}
	return nil
}
