package gitstore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/state"
)

// HostIdentity is who this clone is among the hosts that share state (a
// rush --remote, sync): the host part of lock owners (<worker>@<host>), of
// a shared rush's worker names and of every lease.
type HostIdentity struct {
	// Name is ZERG_HOST, else the clone's own name, made once per clone in
	// .git/zerg/host-id: the machine's name and a random suffix, so that
	// clones on one machine, or machines that share a name (cloned VMs,
	// containers, CI runners), are told apart without configuration.
	Name string
	// Instance tells this clone from a copy of it that kept its host-id
	// (cp -r of a clone, a disk or an image with a clone in it): a digest
	// of the name, the machine's name and the repository directory's
	// inode, which a copy does not keep. Every lease carries it.
	Instance string
	// MadeIn is where host-id was made when that is not this clone ("" when
	// it is, or with ZERG_HOST): this clone is a copy, or was moved.
	MadeIn string
	// Twin says that the clone in MadeIn is still there with this name:
	// this clone is its copy, and the two would be taken for one host.
	Twin bool
	// Err says why the clone has no identity of its own (its host-id
	// cannot be read or made): Name is then the machine's, which other
	// clones may share, and claims are refused.
	Err error
}

// hostIDOnce makes a Store's identity once, whichever goroutine asks
// first.
type hostIDOnce struct {
	once sync.Once
	id   HostIdentity
}

// hostIDFile holds the clone's host identity: its name on the first line,
// the repository directory it was made in on the second.
func hostIDFile(s *Store) string { return s.Layout().HostID() }

// Host is this clone's host identity, made on first use.
func (s *Store) Host() HostIdentity {
	s.hostID.once.Do(func() { s.hostID.id = s.makeHost() })
	return s.hostID.id
}

// Host is the identity of the clone the transaction writes in.
func (tx *Tx) Host() HostIdentity { return tx.s.Host() }

// Holds reports whether w is a lease this clone made (a lease without an
// instance, made by an older git-zerg, is taken by its name alone).
func (h HostIdentity) Holds(w *state.Worker) bool {
	return w.Host == h.Name && (w.Instance == "" || w.Instance == h.Instance)
}

// Clash reports whether w is a lease another clone made under this
// clone's name: two clones present one identity.
func (h HostIdentity) Clash(w *state.Worker) bool {
	return w.Host == h.Name && w.Instance != "" && w.Instance != h.Instance
}

func (s *Store) makeHost() HostIdentity {
	if name := os.Getenv("ZERG_HOST"); name != "" {
		return HostIdentity{Name: name, Instance: s.instance(name)}
	}
	here := realPath(s.CommonDir)
	name, madeIn, err := s.hostIDFile(here)
	if err != nil {
		name, madeIn = hostname.Get(), ""
	}
	if madeIn == here {
		madeIn = ""
	}
	h := HostIdentity{Name: name, Instance: s.instance(name), MadeIn: madeIn, Err: err}
	if madeIn != "" {
		b, err := os.ReadFile(LayoutOf(madeIn).HostID())
		twin, _, _ := parseHostID(string(b))
		h.Twin = err == nil && twin == name
	}
	return h
}

// instance digests what a copy of the clone does not keep: the machine it
// is on and its repository directory's inode. The path is left out, so a
// clone moved with mv stays itself.
func (s *Store) instance(name string) string {
	var ino uint64
	if fi, err := os.Stat(s.CommonDir); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", name, hostname.Get(), ino))
	return hex.EncodeToString(sum[:6])
}

// hostIDFile reads the clone's host-id, making it first. Concurrent first
// uses agree on one: each writes its own into a temporary file, and only
// one link into place succeeds.
func (s *Store) hostIDFile(here string) (name, madeIn string, err error) {
	file := hostIDFile(s)
	for try := 0; try < 2; try++ {
		b, err := os.ReadFile(file)
		if err == nil {
			if name, madeIn, ok := parseHostID(string(b)); ok {
				return name, madeIn, nil
			}
			return "", "", fmt.Errorf("%s is not a host identity: remove it to make a new one", file)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		if err := writeHostID(file, newHostName(), here); err != nil {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("%s: made, then not found", file)
}

// parseHostID reads host-id: a name without spaces or control characters
// (a person may write one of their own there), then where it was made.
func parseHostID(text string) (name, madeIn string, ok bool) {
	name, rest, _ := strings.Cut(text, "\n")
	madeIn, _, _ = strings.Cut(rest, "\n")
	if name == "" || len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", "", false
	}
	return name, madeIn, true
}

func writeHostID(file, name, madeIn string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), "host-id.tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(name + "\n" + madeIn + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(f.Name(), file); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// newHostName is the machine's name (its first 32 characters that fit a
// worker's name) and 8 random hex digits: the machine part says where
// the host is, the random part tells apart the clones of one name.
func newHostName() string {
	label := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			return c
		}
		return '-'
	}, hostname.Get())
	if len(label) > 32 {
		label = label[:32]
	}
	b := make([]byte, 4)
	rand.Read(b) // never fails (crypto/rand)
	return strings.Trim(label, "-.") + "-" + hex.EncodeToString(b)
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		if abs, err := filepath.Abs(r); err == nil {
			return abs
		}
	}
	return p
}

// hostname is the machine's name, read once.
var hostname = &lazy.Value[string]{Build: func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	return h
}}
