package gitstore

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/git-zerg/git-zerg/state"
)

// gitLoop runs a git command over and over in dir, as a user's (or git's
// own automatic) maintenance would beside git-zerg. The returned stop ends
// the loop once the command under way finishes (killing git gc would
// leave its children writing into the repository) and reports how many
// runs succeeded.
func gitLoop(t *testing.T, dir string, args ...string) (stop func() int) {
	t.Helper()
	var quit atomic.Bool
	done := make(chan int)
	go func() {
		n := 0
		for !quit.Load() {
			if exec.Command("git", append([]string{"-C", dir}, args...)...).Run() == nil {
				n++
			}
		}
		done <- n
	}()
	var once sync.Once
	var runs int
	stop = func() int {
		once.Do(func() {
			quit.Store(true)
			runs = <-done
		})
		return runs
	}
	t.Cleanup(func() { stop() })
	return stop
}

// TestReadsSurviveRepack reads the state over and over, each time as a new
// process would (nothing remembered) and as a long-lived one does, while
// git gc and git repack -a -d move every object into new packs and delete
// the old ones, and a writer keeps adding loose objects for them to move:
// no read may fail.
func TestReadsSurviveRepack(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	dir := newRepo(t)
	plan(t, openStore(t, dir), "f", tasks(20))
	git(t, dir, "repack", "-a", "-d", "-q")
	stops := []func() int{gitLoop(t, dir, "repack", "-a", "-d", "-q"), gitLoop(t, dir, "gc", "--quiet")}
	long := openStore(t, dir)
	long.procKey = t.Name() + " long-lived"
	var failures []error
	for i := 0; i < rounds; i++ {
		fresh := openStore(t, dir)
		fresh.procKey = fmt.Sprintf("%s reader %d", t.Name(), i)
		if i%10 == 0 {
			if err := setStatus(long, "f", fmt.Sprintf("T%03d", i/10%20), state.Done); err != nil {
				failures = append(failures, err)
			}
		}
		for _, s := range []*Store{fresh, long} {
			tx, err := s.View("f")
			if err == nil {
				_, err = tx.Tasks()
			}
			if err == nil {
				_, err = s.Log("f", 0)
			}
			if err == nil {
				_, err = tx.Locks()
			}
			if err != nil {
				failures = append(failures, err)
			}
		}
	}
	for _, stop := range stops {
		stop()
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d reads failed beside gc and repack:\n%v", len(failures), 2*rounds, errors.Join(failures...))
	}
}
