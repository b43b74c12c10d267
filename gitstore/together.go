package gitstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Transitions of one process that are ready at the same moment share a
// state commit and, with an arbiter, one push: a rush's workers on one host
// that settle together cost the remote one push instead of one each. Every
// transition to a shared remote is a compare-and-swap of one ref, so the
// remote takes them one at a time, and each push that loses its lease costs
// a fetch and another push; fewer pushes is fewer lost leases.
//
// The one that holds the process's lock leads: before each attempt it
// takes every transition waiting for the lock, runs them in order on one
// transaction (each sees the ones before it, as if they had committed
// first), and commits them together. One that fails is answered with its
// error and left out; the others are run again without it, so that none
// keeps a change made on a state another's failure produced.

type joiner struct {
	fn   func(tx *Tx) (*Message, error)
	err  error
	done chan struct{}
}

type joiners struct {
	mu      sync.Mutex
	waiting []*joiner
}

// joinersOf returns the transitions of s's Repo waiting to share a commit
// on feature.
func (s *Store) joinersOf(feature string) *joiners {
	r := s.repo
	r.mu.Lock()
	defer r.mu.Unlock()
	k := togetherKey{s.publisher.Remote(), feature}
	js := r.together[k]
	if js == nil {
		js = &joiners{}
		r.together[k] = js
	}
	return js
}

// errAgain: the transaction's work changed (a joiner left); run it again
// on a fresh read, without waiting.
var errAgain = errors.New("again")

// UpdateTogether is Update for transitions that may share their state
// commit with others of this process going to the same Publisher's Remote:
// fn must not use PushAlso. Without a Publisher (an arbiter) it is Update:
// a local transition costs too little to wait for company.
func (s *Store) UpdateTogether(ctx context.Context, feature string, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	if s.publisher == nil {
		return s.Update(ctx, feature, now, fn)
	}
	js := s.joinersOf(feature)
	me := &joiner{fn: fn, done: make(chan struct{})}
	js.mu.Lock()
	js.waiting = append(js.waiting, me)
	js.mu.Unlock()

	mu := s.ProcessLock()
	mu.Lock()
	select {
	case <-me.done:
		// Another leader took it and answered.
		mu.Unlock()
		return me.err
	default:
	}
	var batch []*joiner
	answer := func(j *joiner, err error) {
		j.err = err
		close(j.done)
	}
	err := s.updateLocked(ctx, feature, false, now, func(tx *Tx) (*Message, error) {
		js.mu.Lock()
		batch = append(batch, js.waiting...)
		js.waiting = nil
		js.mu.Unlock()
		var msg *Message
		for i, j := range batch {
			m, err := j.fn(tx)
			if err != nil {
				answer(j, err)
				batch = append(batch[:i:i], batch[i+1:]...)
				if len(batch) == 0 {
					return nil, nil
				}
				return nil, errAgain
			}
			switch {
			case m == nil:
			case msg == nil:
				c := *m
				msg = &c
			default:
				msg.Subject += "; then " + m.Subject
			}
		}
		return msg, nil
	})
	for _, j := range batch {
		answer(j, err)
	}
	mu.Unlock()
	<-me.done
	return me.err
}
