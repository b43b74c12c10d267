package state

import "github.com/git-zerg/git-zerg/lazy"

// Op is what a state commit did (its Zerg-Op trailer) and what a task's
// history event records. The names are public: they are stored in every
// commit and event and printed by `log` and --json (README "Task states").
type Op string

// The ops that move tasks (README "Task states").
const (
	OpPlan      Op = "plan"
	OpClaim     Op = "claim"
	OpDone      Op = "done"
	OpMerge     Op = "merge"
	OpRelease   Op = "release"
	OpInterrupt Op = "interrupt"
	OpExpire    Op = "expire"
	OpFail      Op = "fail"
	OpBackoff   Op = "backoff"
	OpBlock     Op = "block"
	OpRetry     Op = "retry"
	OpApprove   Op = "approve"
	// OpUpdate: plan --update changed the task's spec; it starts again.
	OpUpdate Op = "update"
	// OpConflict records, in a sync merge, a transition another machine
	// made concurrently and lost; the task's own state does not move.
	OpConflict Op = "conflict"
	// The forge (README "Review on a forge"): ship records a verified
	// task's pull request; land makes it done once that PR is merged with
	// its work; reject blocks it when the PR was closed unmerged; reopen
	// blocks a done task whose issue was reopened; close blocks a task
	// whose issue was closed elsewhere before its work was done (never
	// done: only its work's facts make a task done).
	OpShip   Op = "ship"
	OpLand   Op = "land"
	OpReject Op = "reject"
	OpReopen Op = "reopen"
	OpClose  Op = "close"
)

// The ops of state commits that move no task's status.
const (
	OpHeartbeat Op = "heartbeat"
	OpLock      Op = "lock"
	OpUnlock    Op = "unlock"
	OpSync      Op = "sync"
	OpDelete    Op = "delete"
	// An epic's own history (refs/zerg/epics/).
	OpEpicPlan    Op = "epic-plan"
	OpEpicBump    Op = "epic-bump"
	OpEpicApprove Op = "epic-approve"
)

// Attempts is what an op does to a task's attempt count.
type Attempts int8

const (
	Uncounted  Attempts = iota // leaves it
	Counted                    // starts an attempt: one more
	GivenBack                  // ends the attempt uncounted: one less
	ResetCount                 // starts afresh: zero
)

type opFacts struct {
	// moves are the transitions the op may make (fsck replays histories
	// against them).
	moves [][2]Status
	// namesTask: the op's commit names the task it moved.
	namesTask bool
	// work: an event of the op that reaches a status with work carries
	// the work's commit.
	work     bool
	attempts Attempts
	// quiet: the op's commit records something (a lease, a lock, an
	// approval) but is no progress of the feature's tasks.
	quiet bool
}

// ops is made on first use: a map literal would be built at every start of
// the program, a hook's included.
var ops = &lazy.Value[map[Op]opFacts]{Build: func() map[Op]opFacts {
	return map[Op]opFacts{
		OpPlan:        {moves: [][2]Status{{"", Pending}}},
		OpClaim:       {moves: [][2]Status{{Pending, Claimed}}, namesTask: true, attempts: Counted},
		OpDone:        {moves: [][2]Status{{Claimed, Verified}, {Claimed, Done}, {Claimed, Failed}}, namesTask: true, work: true},
		OpMerge:       {moves: [][2]Status{{Verified, Done}, {Verified, Blocked}}, namesTask: true, work: true},
		OpRelease:     {moves: [][2]Status{{Claimed, Pending}}, namesTask: true, attempts: GivenBack},
		OpInterrupt:   {moves: [][2]Status{{Claimed, Pending}}, namesTask: true, attempts: GivenBack},
		OpExpire:      {moves: [][2]Status{{Claimed, Pending}, {Claimed, Failed}}},
		OpFail:        {moves: [][2]Status{{Claimed, Failed}}, namesTask: true},
		OpBackoff:     {moves: [][2]Status{{Failed, Pending}}},
		OpBlock:       {moves: [][2]Status{{Failed, Blocked}}},
		OpRetry:       {moves: [][2]Status{{Blocked, Pending}, {Failed, Pending}}, namesTask: true, attempts: ResetCount},
		OpApprove:     {moves: [][2]Status{{Pending, Pending}, {Failed, Failed}, {Blocked, Blocked}}, namesTask: true, quiet: true},
		OpUpdate:      {moves: [][2]Status{{Pending, Pending}, {Failed, Pending}, {Blocked, Pending}, {Verified, Pending}, {Done, Pending}}, attempts: ResetCount},
		OpConflict:    {moves: sameStatus()},
		OpShip:        {moves: [][2]Status{{Verified, Verified}}, namesTask: true},
		OpLand:        {moves: [][2]Status{{Verified, Done}}, namesTask: true},
		OpReject:      {moves: [][2]Status{{Verified, Blocked}}, namesTask: true},
		OpReopen:      {moves: [][2]Status{{Done, Blocked}}, namesTask: true},
		OpClose:       {moves: [][2]Status{{Pending, Blocked}, {Failed, Blocked}, {Verified, Blocked}}, namesTask: true},
		OpHeartbeat:   {quiet: true},
		OpLock:        {quiet: true},
		OpUnlock:      {quiet: true},
		OpSync:        {},
		OpDelete:      {},
		OpEpicPlan:    {},
		OpEpicBump:    {},
		OpEpicApprove: {},
	}
}}

func sameStatus() [][2]Status {
	var out [][2]Status
	for _, st := range Statuses {
		out = append(out, [2]Status{st, st})
	}
	return out
}

// Known reports whether git-zerg writes op.
func (op Op) Known() bool {
	_, ok := ops.Get()[op]
	return ok
}

// Legal reports whether op may take a task from one status to another.
func (op Op) Legal(from, to Status) bool {
	for _, tr := range ops.Get()[op].moves {
		if tr[0] == from && tr[1] == to {
			return true
		}
	}
	return false
}

// From reports whether op may start from status from, wherever it leads.
func (op Op) From(from Status) bool {
	for _, tr := range ops.Get()[op].moves {
		if tr[0] == from {
			return true
		}
	}
	return false
}

// NamesTask reports whether the op's commit names the task it moved (its
// Zerg-Task trailer), so fsck can check that the task has the op's event.
func (op Op) NamesTask() bool { return ops.Get()[op].namesTask }

// CarriesWork reports whether an event of op to status to records the
// task's work (its commit), which fsck checks.
func (op Op) CarriesWork(to Status) bool { return ops.Get()[op].work && to.HasWork() }

// Attempts is what the op does to the task's attempt count.
func (op Op) Attempts() Attempts { return ops.Get()[op].attempts }

// Progress reports whether a commit of op can be progress of the
// feature's tasks: anything but a lease's heartbeat, a lock, an unlock or
// an approval. An op git-zerg does not write may be anything, so it is.
func (op Op) Progress() bool {
	f, ok := ops.Get()[op]
	return !ok || !f.quiet
}
