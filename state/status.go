package state

// The sets of statuses the rest of git-zerg decides on. Each set is a
// column of statusSets, so a new status is classified in one row here and
// every caller follows; status_test.go fails until it is.

type statusSet uint8

const (
	settled statusSet = 1 << iota
	atRest
	claimable
	holding
	begun
	stopped
	hasWork
)

// statusSets is a switch, not a map: a map literal is built at every start
// of the program.
func statusSets(s Status) statusSet {
	switch s {
	case Pending:
		return claimable
	case Claimed:
		return holding | begun
	case Verified:
		return atRest | holding | begun | hasWork
	case Done:
		return settled | atRest | begun | hasWork
	case Failed:
		return claimable | stopped
	case Blocked:
		return settled | atRest | stopped
	}
	return 0
}

func (s Status) in(set statusSet) bool { return statusSets(s)&set != 0 }

// Settled: nothing more happens to the task unless a person acts. Done, or
// blocked until a retry. The lowest level with an unsettled task is the one
// a rush (and task mode) works on.
func (s Status) Settled() bool { return s.in(settled) }

// AtRest: no worker acts on the task in its level any more. Settled, or
// verified work waiting for the level's merge: a level whose tasks are all
// at rest is ready to merge.
func (s Status) AtRest() bool { return s.in(atRest) }

// Claimable: a worker may claim the task once its backoff, its attempts,
// its approval and its dependencies allow (gates.Policy.Ready decides
// those). Pending, or failed with a backoff to wait out.
func (s Status) Claimable() bool { return s.in(claimable) }

// Holding: the task's claim still holds its files. Claimed, or verified
// (its locks stay until the merge makes it done), so a lock of the task's
// owner is live while the task is in one of these.
func (s Status) Holding() bool { return s.in(holding) }

// Begun: a worker took the task up and its work may be on the branch.
// Claimed, verified or done; in shared mode a commit touching only the paths
// of begun tasks is theirs.
func (s Status) Begun() bool { return s.in(begun) }

// Stopped: an attempt failed or a rule refused the task, and its Reason
// says why. Failed or blocked.
func (s Status) Stopped() bool { return s.in(stopped) }

// HasWork: the task's work passed its verification and is pinned in
// Commit. Verified or done.
func (s Status) HasWork() bool { return s.in(hasWork) }
