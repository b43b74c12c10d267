package engine

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
)

// AcquireRush takes the rush marker of feature on this host, refused
// while a live rush holds it.
func AcquireRush(s *gitstore.Store, feature string) (*rushmarker.Marker, error) {
	return acquireRush(s, feature, feature)
}

// AcquireEpicRush takes the rush marker of the epic name on this host, as
// AcquireRush does a feature's; the two are apart, so an epic and a
// feature of one name do not hold each other back.
func AcquireEpicRush(s *gitstore.Store, name string) (*rushmarker.Marker, error) {
	return acquireRush(s, "epics/"+name, "epic "+name)
}

// acquireRush takes the marker key (a path under the rush directory); a
// refusal names the rush as what.
func acquireRush(s *gitstore.Store, key, what string) (*rushmarker.Marker, error) {
	m, err := rushmarker.Acquire(s, key)
	var held *rushmarker.HeldError
	switch {
	case errors.As(err, &held):
		return nil, &Error{Kind: Refused, What: "rush refused",
			Why:  fmt.Sprintf("a rush of %s is already running (pid %d)", what, held.PID),
			Hint: "wait for it, or stop it; git zerg rush --resume takes over once it is gone"}
	case errors.Is(err, rushmarker.ErrContended):
		return nil, RefusedError("rush refused", "could not take the rush marker")
	}
	return m, err
}
