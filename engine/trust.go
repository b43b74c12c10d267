package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// State fetched from elsewhere is never trusted to run a command: a task's
// verification command runs only if this machine planned it (or accepted
// it with plan --accept). The trust file lists each task with the digest of
// its command.
func commandDigest(t *state.Task) string {
	sum := sha256.Sum256([]byte(t.Spec.Verification.Command))
	return hex.EncodeToString(sum[:])
}

// TrustFile is where a feature's trusted commands are listed.
func TrustFile(s *gitstore.Store, feature string) string {
	return filepath.Join(s.ZergDir(), "trusted", feature)
}

// Trust records the tasks' commands as planned or accepted here.
func Trust(s *gitstore.Store, feature string, tasks []*state.Task) error {
	var b strings.Builder
	for _, t := range tasks {
		fmt.Fprintf(&b, "%s %s\n", t.ID(), commandDigest(t))
	}
	name := TrustFile(s, feature)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}

// Trusted reports whether the task's command is the one planned or
// accepted here.
func Trusted(s *gitstore.Store, feature string, t *state.Task) bool {
	b, err := os.ReadFile(TrustFile(s, feature))
	if err != nil {
		return false
	}
	want := t.ID() + " " + commandDigest(t)
	for _, line := range strings.Split(string(b), "\n") {
		if line == want {
			return true
		}
	}
	return false
}

func untrusted(what string, t *state.Task, feature string) *Error {
	return &Error{Kind: Refused, What: what,
		Why:  fmt.Sprintf("the verification command of %s was not planned or accepted on this machine", t.ID()),
		Hint: "review the graph, then git zerg plan --accept " + feature}
}

// trustedAll refuses a rush whose graph holds a command this machine did
// not plan or accept.
func (g *Engine) trustedAll(tasks []*state.Task) error {
	for _, t := range tasks {
		if !Trusted(g.Store, g.Feature, t) {
			return untrusted("rush refused", t, g.Feature)
		}
	}
	return nil
}

// Commands are the tasks of a feature whose verification commands plan
// --accept shows, to be trusted here with Trust.
func Commands(s *gitstore.Store, feature string) ([]*state.Task, error) {
	tx, err := s.View(feature)
	if err != nil {
		return nil, err
	}
	return tx.Tasks()
}

// RequiredIssues are MissingIssues under the configuration of s. A
// configuration that cannot be read is reported by the commands that run
// on it; planning never needed one, and still plans.
func RequiredIssues(s *gitstore.Store, plan *levels.Plan) []levels.Problem {
	cfg, err := LoadConfig(s)
	if err != nil {
		return nil
	}
	return MissingIssues(cfg, plan)
}

// MissingIssues are the problems of a plan whose tasks lack the issue the
// configuration asks each to have (none when it asks for none).
func MissingIssues(cfg *config.Config, plan *levels.Plan) []levels.Problem {
	if !cfg.Forge.RequireIssue {
		return nil
	}
	return levels.MissingIssues(plan.Graph)
}
