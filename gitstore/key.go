package gitstore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitobj"
)

// Anyone who can run git can write a commit that looks like one of ours,
// and can move a ref with the reflog message we use. What tells our writes
// from theirs is a MAC made with the repository's own key: 32 random bytes
// in the common git dir, never a ref, so never pushed or fetched. Commits
// and files that carry no valid MAC are treated as if they had arrived from
// elsewhere: checked, never taken as written here.
//
// A worker runs as the same user and could read the key; the MAC stops
// state written with plain git (by hand, by an agent's habit, by a fetch),
// not a worker that sets out to read the key and compute one. That needs
// the worker kept from the file (--mode container, which does not mount
// it).

// KeyFile holds the repository's key (0600).
func KeyFile(s *Store) string { return s.Layout().Key() }

const keySize = 32

// Key returns the repository's key, making it first when create is set
// (nil with no error when there is none and create is not set). Concurrent
// first uses agree on one key: each writes its own into a temporary file,
// and only one link into place succeeds.
func (s *Store) Key(create bool) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	key, err := readKey(KeyFile(s), create)
	if err != nil || key == nil {
		return nil, err
	}
	s.key = key
	return key, nil
}

func readKey(name string, create bool) ([]byte, error) {
	b, err := os.ReadFile(name)
	switch {
	case err == nil && len(b) == keySize:
		return b, nil
	case err == nil:
		return nil, fmt.Errorf("%s is not a repository key (%d bytes, want %d): remove it to make a new one", name, len(b), keySize)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !create:
		return nil, nil
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "key.tmp*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(f.Name(), name); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKey(name, false)
}

// KeyID names a key in the records it made: a record names the key, so a
// record made with another repository's key is told from a forged one.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// MAC is the hex HMAC-SHA256 of parts under key, in a domain of its own:
// a MAC made for one kind of record never verifies as another.
func MAC(key []byte, domain string, parts ...string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(domain))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Seal returns "<key id> <mac>" for parts in domain, making the key on
// first use.
func (s *Store) Seal(domain string, parts ...string) (string, error) {
	key, err := s.Key(true)
	if err != nil {
		return "", err
	}
	return KeyID(key) + " " + MAC(key, domain, parts...), nil
}

// Sealed reports whether seal ("<key id> <mac>") was made by Seal here for
// the same domain and parts.
func (s *Store) Sealed(seal, domain string, parts ...string) bool {
	id, mac, ok := strings.Cut(strings.TrimSpace(seal), " ")
	if !ok {
		return false
	}
	key, err := s.Key(false)
	if err != nil || key == nil || id != KeyID(key) {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(MAC(key, domain, parts...)))
}

// sealTrailer ends the message of every commit the store writes: state
// transitions, sync merges, staging merges. It covers the whole commit
// (tree, parents, author, committer, message), so none of it can be moved
// onto another commit.
const sealTrailer = "Zerg-Seal: "

const commitDomain = "git-zerg commit"

// seal appends the seal trailer to c's message.
func (s *Store) seal(c *gitobj.Commit) error {
	body := strings.TrimRight(c.Message, "\n") + "\n"
	c.Message = body
	v, err := s.Seal(commitDomain, string(c.Encode()))
	if err != nil {
		return err
	}
	c.Message = body + sealTrailer + v + "\n"
	return nil
}

// SealedCommit reports whether the store of this repository wrote commit c
// (its seal verifies with this repository's key).
func (s *Store) SealedCommit(c *gitobj.Commit) bool {
	i := strings.LastIndex(c.Message, "\n"+sealTrailer)
	if i < 0 || !strings.HasSuffix(c.Message, "\n") {
		return false
	}
	seal := c.Message[i+1+len(sealTrailer) : len(c.Message)-1]
	if strings.Contains(seal, "\n") {
		return false
	}
	body := *c
	body.Message = c.Message[:i+1]
	return s.Sealed(seal, commitDomain, string(body.Encode()))
}
