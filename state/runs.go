package state

import "time"

// Run is one time a worker held the task: from its claim to the event
// that ended the claim.
type Run struct {
	// Attempt is the attempt's number across the task's whole history:
	// a retry resets the count the retry policy goes by, never this. A
	// run given back uncounted (released, interrupted) has the number
	// the next run takes again.
	Attempt int
	Worker  string
	Start   time.Time
	End     time.Time // zero while the run goes on
	// Outcome is the status the run ended in (verified, done, failed,
	// pending when given back or expired), "" while it goes on.
	Outcome Status
	Reason  string
	Counted bool // the run counted as an attempt
}

// Runs lists the task's runs, oldest first, from its history.
func (t *Task) Runs() []Run {
	var runs []Run
	counted := 0
	open := -1
	for _, ev := range t.History {
		if ev.Op == OpClaim && ev.To == Claimed {
			runs = append(runs, Run{Attempt: counted + 1, Worker: ev.Worker, Start: ev.At, Counted: true})
			open = len(runs) - 1
			continue
		}
		if open < 0 || ev.From != Claimed || ev.To == Claimed {
			continue
		}
		r := &runs[open]
		r.End, r.Outcome, r.Reason = ev.At, ev.To, ev.Reason
		if ev.Op.Attempts() == GivenBack {
			r.Counted = false
		} else {
			counted++
		}
		open = -1
	}
	return runs
}

// Took is how long the run lasted, up to now while it goes on.
func (r Run) Took(now time.Time) time.Duration {
	if r.End.IsZero() {
		return now.Sub(r.Start)
	}
	return r.End.Sub(r.Start)
}

// AttemptNumber is the number of the task's latest run (0 before any),
// counted across retries: what its log, its saved commit and ZERG_ATTEMPT
// are numbered by, so that a retried task's first attempt does not take
// the place of the one before the retry.
func (t *Task) AttemptNumber() int {
	runs := t.Runs()
	if len(runs) == 0 {
		return 0
	}
	return runs[len(runs)-1].Attempt
}
