//go:build !unix

package gitstore

import "time"

// writerTurn orders nothing where there is no flock: the compare-and-swap
// alone decides between writers.
func (s *Store) writerTurn(time.Duration) (end func()) { return func() {} }
