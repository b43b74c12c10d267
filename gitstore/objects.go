package gitstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/state"
)

// The objects are odb's; these are the store's short names for them.

type (
	entries     = odb.Entries
	batch       = odb.Batch
	batchObject = odb.Object
	heldPacks   = odb.HeldPacks
)

// ErrMissingObject: the object is in no object directory (fs.ErrNotExist, for
// callers that tell a missing object from a damaged one).
var ErrMissingObject = odb.ErrMissingObject

func entriesOf(t *gitobj.Tree) entries { return odb.EntriesOf(t) }

func parallel(n int, f func(i int) error) error { return odb.Parallel(n, f) }

func (s *Store) readBlob(h plumbing.Hash) ([]byte, error)           { return s.db.ReadBlob(h) }
func (s *Store) readJSON(h plumbing.Hash, v any) error              { return s.db.ReadJSON(h, v) }
func (s *Store) readTree(h plumbing.Hash) (*gitobj.Tree, error)     { return s.db.ReadTree(h) }
func (s *Store) readCommit(h plumbing.Hash) (*gitobj.Commit, error) { return s.db.ReadCommit(h) }
func (s *Store) writeBlob(data []byte) (plumbing.Hash, error)       { return s.db.WriteBlob(data) }
func (s *Store) writeJSON(v any) (plumbing.Hash, error)             { return s.db.WriteJSON(v) }
func (s *Store) writeCommit(c *gitobj.Commit) (plumbing.Hash, error) {
	return s.db.WriteCommit(c)
}
func (s *Store) writeTree(e entries) (plumbing.Hash, error) { return s.db.WriteTree(e) }
func (s *Store) hasObject(h plumbing.Hash) bool             { return s.db.Has(h) }
func (s *Store) newBatch(held *heldPacks) *batch            { return s.db.NewBatch(held) }

func sortStrings(s []string) { slices.Sort(s) }

// updateRefs is moveRefs, made safe from git prune: an update git refuses
// for a missing object (a prune deleted it between its write and the
// update) is made again once the objects written are, and an update made
// has its objects confirmed.
//
// Why an object written can go missing, and why a pack cannot: see
// odb.DB.ConfirmWritten.
func (s *Store) updateRefs(ctx context.Context, us []refUpdate) error {
	err := s.moveRefs(ctx, us)
	if refs.MissingObject(err) && s.db.RestoreUnconfirmed() == nil {
		err = s.moveRefs(ctx, us)
	}
	if err != nil {
		return err
	}
	return s.db.ConfirmWritten()
}

// Message is what a state commit says about itself. Subject is the first
// line; the other fields become trailers, which `log` and `fsck` read back.
type Message struct {
	Subject string
	Op      state.Op
	Feature string
	Task    string
	Worker  string
	From    string
	To      string
	Reason  string
	Clock   uint64
}

func (m *Message) String() string {
	var b strings.Builder
	b.WriteString(m.Subject)
	b.WriteString("\n\n")
	tr := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.ReplaceAll(v, "\n", " "))
		}
	}
	tr("Zerg-Op", string(m.Op))
	tr("Zerg-Feature", m.Feature)
	tr("Zerg-Task", m.Task)
	tr("Zerg-Worker", m.Worker)
	tr("Zerg-From", m.From)
	tr("Zerg-To", m.To)
	tr("Zerg-Reason", m.Reason)
	if m.Clock > 0 {
		tr("Zerg-Clock", fmt.Sprint(m.Clock))
	}
	return b.String()
}

// ParseMessage reads back a state commit message.
func ParseMessage(msg string) Message {
	var m Message
	subject, rest, _ := strings.Cut(msg, "\n")
	m.Subject = subject
	for _, line := range strings.Split(rest, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case "Zerg-Op":
			m.Op = state.Op(v)
		case "Zerg-Feature":
			m.Feature = v
		case "Zerg-Task":
			m.Task = v
		case "Zerg-Worker":
			m.Worker = v
		case "Zerg-From":
			m.From = v
		case "Zerg-To":
			m.To = v
		case "Zerg-Reason":
			m.Reason = v
		case "Zerg-Clock":
			fmt.Sscan(v, &m.Clock)
		}
	}
	return m
}
