package gitstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// BenchmarkTransition is one state transition in-process: a task changes
// and a lock is taken, as in a claim.
func BenchmarkTransition(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			dir := newRepoB(b)
			s := openStoreB(b, dir)
			planB(b, s, "f", tasks(n))
			now := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("T%03d", i%n)
				err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
					tk, err := tx.Task(id)
					if err != nil {
						return nil, err
					}
					c := tk.Clone()
					c.Record(state.Event{Op: "test", To: state.Claimed})
					locks, err := tx.Locks()
					if err != nil {
						return nil, err
					}
					tx.SetLocks(append(locks[:0:0], state.Lock{Path: "p/" + id, Owner: "w", Created: now, Expires: now.Add(time.Hour)}))
					return &Message{Subject: "x", Task: id}, tx.Put(c)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkView is a read of one task and the locks, as a hook or a
// status makes: it includes the check that no update was undone.
func BenchmarkView(b *testing.B) {
	dir := newRepoB(b)
	s := openStoreB(b, dir)
	planB(b, s, "f", tasks(100))
	for i := 0; i < 20; i++ {
		if err := setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := s.View("f")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Task("T050"); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Locks(); err != nil {
			b.Fatal(err)
		}
	}
}
