package view

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// Source is the one reader of a repository that a view's goroutines share:
// a Store is not safe for concurrent use, so every read takes a turn. What
// it reads has passed the check status makes (engine.CheckStateAt): state
// changed outside git-zerg into something illegal is refused, not shown.
type Source struct {
	ctx context.Context
	mu  sync.Mutex
	s   *gitstore.Store
	now func() time.Time
	// refused is the last tip that failed the check and why: a view polls,
	// and the same forged tip is not replayed again at every tick.
	refused    plumbing.Hash
	refusedErr error
	// only, when set, is the features the views list and switch between
	// (an epic's, in its order), instead of every planned one.
	only []string
	// gates remembers the gate records read, for every snapshot after.
	gates gateCache
}

// Only makes the views list and switch between features alone, in that
// order (an epic's), those not planned left out.
func (src *Source) Only(features []string) {
	src.mu.Lock()
	defer src.mu.Unlock()
	src.only = features
}

// NewSource reads s; now is the clock snapshots are stamped with; ctx
// bounds the checks of the state it reads.
func NewSource(ctx context.Context, s *gitstore.Store, now func() time.Time) *Source {
	if now == nil {
		now = time.Now
	}
	return &Source{ctx: ctx, s: s, now: now, gates: gateCache{}}
}

// Now is the source's clock.
func (src *Source) Now() time.Time { return src.now() }

// Tip is the commit the feature's ref points at: one small file read (or a
// stat of packed-refs), cheap enough to poll several times a second.
func (src *Source) Tip(feature string) (string, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	h, err := src.s.ReadRef(gitstore.FeatureRef(feature))
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// gatesTip names the gate records there are: it changes when a gate run
// is recorded. A run whose gates failed is recorded without the state
// moving (a rush that stops on it writes nothing else), so a view that
// went by the feature's ref alone would not show it.
func (src *Source) gatesTip() (string, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	var b strings.Builder
	for _, prefix := range []string{gitstore.GatesPrefix, gitstore.GatesFailedPrefix} {
		refs, err := src.s.RefsUnder(prefix)
		if err != nil {
			return "", err
		}
		for _, name := range slices.Sorted(maps.Keys(refs)) {
			h := refs[name]
			b.WriteString(name)
			b.Write(h[:])
		}
	}
	return b.String(), nil
}

// view opens the feature as of its tip, once that tip passed the check.
// Called with mu held.
func (src *Source) view(feature string) (*gitstore.Tx, error) {
	tx, err := src.s.View(feature)
	if err != nil {
		return nil, err
	}
	tip := tx.Tip()
	if tip == src.refused && !tip.IsZero() {
		return nil, src.refusedErr
	}
	if err := engine.CheckStateAt(src.ctx, src.s, feature, tip); err != nil {
		if isRefusal(err) {
			src.refused, src.refusedErr = tip, err
		}
		return nil, err
	}
	return tx, nil
}

// isRefusal says whether err refuses the state as it stands, rather than
// failing to read it.
func isRefusal(err error) bool {
	var ee *engine.Error
	return errors.As(err, &ee) && ee.Kind == engine.Refused
}

// Snapshot reads the feature as of its ref's tip.
func (src *Source) Snapshot(feature string) (*Snapshot, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	tx, err := src.view(feature)
	if err != nil {
		return nil, err
	}
	return loadTx(src.s, tx, src.now(), src.gates)
}

// Features lists the planned features.
func (src *Source) Features() ([]string, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	fs, err := src.s.Features()
	if src.only != nil && err == nil {
		planned := map[string]bool{}
		for _, f := range fs {
			planned[f] = true
		}
		fs = nil
		for _, f := range src.only {
			if planned[f] {
				fs = append(fs, f)
			}
		}
	}
	if fs == nil {
		fs = []string{}
	}
	return fs, err
}

// Detail reads a task's history and diffs.
func (src *Source) Detail(feature, id string) (*Detail, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	tx, err := src.view(feature)
	if err != nil {
		return nil, err
	}
	return detailOf(src.s, tx, id)
}

// Task reads one task as stored, history included.
func (src *Source) Task(feature, id string) (*state.Task, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	tx, err := src.view(feature)
	if err != nil {
		return nil, err
	}
	return tx.Task(id)
}

// LogFile is the path of an attempt's log on this machine.
func (src *Source) LogFile(feature, id string, attempt int) (string, bool) {
	return logFile(src.s, feature, id, attempt)
}

// Attempts lists the attempt logs this machine has of a task.
func (src *Source) Attempts(feature, id string) []int { return taskAttempts(src.s, feature, id) }

// Output reads the end of an attempt's log (no git involved, no turn).
func (src *Source) Output(feature, id string, attempt int, max int64) (*Output, error) {
	return readOutput(src.s, feature, id, attempt, max)
}

// Poll calls fn with the feature's snapshot now and again each time its ref
// moves or a gate run is recorded, checking every interval, until ctx
// ends. A read that fails is passed on and tried again at the next check.
func (src *Source) Poll(ctx context.Context, feature string, interval time.Duration, fn func(*Snapshot, error)) {
	last := ""
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		tip, err := src.Tip(feature)
		var gates string
		if err == nil {
			gates, err = src.gatesTip()
		}
		if now := tip + "\x00" + gates; err == nil && now != last {
			var sn *Snapshot
			if sn, err = src.Snapshot(feature); err == nil {
				last = now
				fn(sn, nil)
			}
		}
		if err != nil {
			last = ""
			fn(nil, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// syncEvery runs sync at each interval until ctx ends, reporting each
// round's error (nil for a good one): a view of a rush on another host
// shows what the last fetch brought.
func syncEvery(ctx context.Context, interval time.Duration, sync func() error, report func(error)) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		report(sync())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
