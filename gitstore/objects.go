package gitstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func (s *Store) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := s.objs.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func (s *Store) readJSON(h plumbing.Hash, v any) error {
	b, err := s.readBlob(h)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode blob %s: %w", h, err)
	}
	return nil
}

func (s *Store) readTree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	t, err := object.GetTree(s.objs, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return t, nil
}

func (s *Store) readCommit(h plumbing.Hash) (*object.Commit, error) {
	c, err := object.GetCommit(s.objs, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

func (s *Store) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := s.objs.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objs.SetEncodedObject(obj)
}

// writeJSON stores v indented, so that `git show` of a state blob reads well
// and `log -p` diffs line by line.
func (s *Store) writeJSON(v any) (plumbing.Hash, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.writeBlob(buf.Bytes())
}

func (s *Store) writeObject(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := s.objs.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objs.SetEncodedObject(obj)
}

// entries is a mutable view of one tree level.
type entries map[string]object.TreeEntry

func entriesOf(t *object.Tree) entries {
	e := make(entries, len(t.Entries))
	for _, te := range t.Entries {
		e[te.Name] = te
	}
	return e
}

func (e entries) setBlob(name string, h plumbing.Hash) {
	e[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

func (e entries) setTree(name string, h plumbing.Hash) {
	e[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
}

// write stores the tree; an empty tree is stored too (git accepts it), but
// callers drop empty subtrees so that no empty directory lingers.
func (s *Store) writeTree(e entries) (plumbing.Hash, error) {
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(e))}
	for name, te := range e {
		te.Name = name
		t.Entries = append(t.Entries, te)
	}
	// git orders entries as if directory names ended in '/'.
	key := func(te object.TreeEntry) string {
		if te.Mode == filemode.Dir {
			return te.Name + "/"
		}
		return te.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return s.writeObject(t)
}

func sortStrings(s []string) { sort.Strings(s) }

// Message is what a state commit says about itself. Subject is the first
// line; the other fields become trailers, which `log` and `fsck` read back.
type Message struct {
	Subject string
	Op      string
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
	tr("Zerg-Op", m.Op)
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
			m.Op = v
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
