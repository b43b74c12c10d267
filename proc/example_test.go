package proc_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/git-zerg/git-zerg/proc"
)

// A scheduler that stops its workers on Ctrl-C: the first signal stops
// every group gracefully, a second kills them at once, and each Wait
// returns only once its group is gone.
func ExampleStart() {
	if _, err := proc.LookProgram("my-agent -p task"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2) // nothing claimed yet
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var workers []*proc.Handle
	for i := 0; i < 3; i++ {
		h, err := proc.Start(context.Background(), proc.Spec{Command: "my-agent -p task"})
		if err != nil {
			continue
		}
		workers = append(workers, h)
	}
	go func() {
		for range sig {
			for _, h := range workers {
				h.Stop()
			}
		}
	}()
	for _, h := range workers {
		res, err := h.Wait()
		switch {
		case err != nil:
		case res.Interrupted:
			// Not an attempt: save the work, release the claim.
		case res.NotFound():
			// Block the task at once; retrying cannot help.
		}
	}
}
