package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The checked tip and the verification passes are each one sealed line:
// a worker can write the file, but not a line whose seal verifies, so what
// it writes counts for nothing (the check replays more; the work is
// verified again).

const checkedDomain = "git-zerg checked tip"

// Checked is the last state tip of the feature checked here, zero when
// none is recorded or the record's seal does not verify (written by
// someone else, or by a version that did not seal it: the next check
// replays more, once).
func Checked(s *gitstore.Store, feature string) plumbing.Hash {
	b, err := os.ReadFile(s.Layout().Checked(feature))
	if err != nil {
		return plumbing.ZeroHash
	}
	tip, seal, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !plumbing.IsHash(tip) || !s.Sealed(seal, checkedDomain, feature, tip) {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(tip)
}

// WriteChecked records tip as the feature's last state checked here.
func WriteChecked(s *gitstore.Store, feature string, tip plumbing.Hash) error {
	seal, err := s.Seal(checkedDomain, feature, tip.String())
	if err != nil {
		return err
	}
	return gitstore.WritePrivate(s.Layout().Checked(feature), []byte(tip.String()+" "+seal+"\n"))
}

const verifiedDomain = "git-zerg verified"

// verificationDigest names what a pass is a pass of: the command and its
// timeout (a pass under a longer limit is not one under a shorter).
func verificationDigest(t *state.Task) string {
	v := t.Spec.Verification
	sum := sha256.Sum256([]byte(strconv.Itoa(v.TimeoutSeconds) + "\x00" + v.Command))
	return hex.EncodeToString(sum[:])
}

// RecordVerified records that t's verification passed here on commit.
// Failing to write it costs a verification later, never a wrong merge,
// so it is not worth failing the transition that passed.
func RecordVerified(s *gitstore.Store, feature string, t *state.Task, commit string) {
	seal, err := s.Seal(verifiedDomain, feature, t.ID(), commit, verificationDigest(t))
	if err != nil {
		return
	}
	gitstore.WritePrivate(s.Layout().Verified(feature, t.ID()), []byte(commit+" "+seal+"\n"))
}

// VerifiedHere reports whether t's verification passed here on commit,
// with the command t has now.
func VerifiedHere(s *gitstore.Store, feature string, t *state.Task, commit string) bool {
	b, err := os.ReadFile(s.Layout().Verified(feature, t.ID()))
	if err != nil {
		return false
	}
	c, seal, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	return c == commit && s.Sealed(seal, verifiedDomain, feature, t.ID(), commit, verificationDigest(t))
}
