package gitstore

import "os"

// rebaseIndexAfter is how many changed entries a delta may hold before the
// index file is encoded again: every reader converts each of them.
const rebaseIndexAfter = 1024

func (s *Store) indexDeltaPath(feature string) string {
	return s.Layout().IndexDelta(feature)
}

// saveIndexDelta writes ix's delta, best effort.
func (s *Store) saveIndexDelta(feature string, ix *Index) {
	_ = s.writeCache(s.indexDeltaPath(feature), ix.Delta())
}

// readIndexDelta brings the index file forward by its delta, if it has one.
func (s *Store) readIndexDelta(feature string, base *Index) *Index {
	data, err := os.ReadFile(s.indexDeltaPath(feature))
	if err != nil {
		return base
	}
	if ix := base.WithDelta(data); ix != nil {
		return ix
	}
	return base
}
