//go:build !unix

package gitstore

import "time"

// writerLock: without flock, the compare-and-swap alone decides.
func (s *Store) writerLock(time.Time) (unlock func()) { return func() {} }
