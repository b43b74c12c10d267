//go:build !unix

package refs

import "time"

// Turns orders nothing where there is no flock: the compare-and-swap
// alone decides between writers. It is safe for concurrent use.
type Turns struct{}

// GivenUp is false: no wait is ever given up on.
func (t *Turns) GivenUp() bool { return false }

// Take returns at once.
func (t *Turns) Take(string, time.Duration) (end func()) { return func() {} }
