package hooks

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
)

// A gate record is a commit anyone can make, and sync copies in the
// records of other machines: neither its existence nor its message proves
// that the gates ran here. A record counts only when it carries a MAC made
// with the repository's own key, which lives in the common git dir, is
// never a ref, and so is never pushed or fetched. Records that arrived from
// elsewhere stay (they are content, and harmless) but do not count.

const (
	macTrailer     = "Zerg-Gates-MAC: "
	setTrailer     = "Zerg-Gates: "
	featureTrailer = "Zerg-Feature: "
	runTrailer     = "Zerg-Gates-Run: "
	gateTrailer    = "Zerg-Gate: "
)

// GateRunLines are the lines of a gate record that say whose staging was
// gated and when: the feature, and the run's start and end (a commit's
// own time has whole seconds only). Records made before they were written
// lack them.
func GateRunLines(feature string, start, end time.Time) string {
	return featureTrailer + feature + "\n" + runTrailer + start.UTC().Format(time.RFC3339Nano) + " " + end.UTC().Format(time.RFC3339Nano) + "\n"
}

// GateSet names a configuration's gates: a pass counts only for the set
// that passed (a gate added or changed since must run). Timeouts are left
// out: a tree that passed within a limit passed.
func GateSet(gs []config.Gate) string {
	h := sha1.New()
	for _, g := range gs {
		fmt.Fprintf(h, "%q %q %t\n", g.Name, g.Command, g.Required)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// gateKeys are the keys whose records count here, by key id: the
// repository's own (gitstore.Store.Key). Sharing gate results between the
// hosts of one rush would add theirs here (say, from a list of trusted key
// files in the configuration); nothing else needs to change, since every
// record names the key that made it.
func gateKeys(s *gitstore.Store) (map[string][]byte, error) {
	key, err := s.Key(false)
	if err != nil || key == nil {
		return nil, err
	}
	return map[string][]byte{gitstore.KeyID(key): key}, nil
}

// gateMAC binds a record's message to the tree it is about: the same
// message on another tree does not verify.
func gateMAC(key []byte, tree, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("git-zerg gate record\x00" + tree + "\x00" + body))
	return hex.EncodeToString(m.Sum(nil))
}

// SignGateRecord returns the message of a gate record for tree with the
// MAC line that makes it count here, making the repository's key on first
// use.
func SignGateRecord(s *gitstore.Store, tree, msg string) (string, error) {
	key, err := s.Key(true)
	if err != nil {
		return "", err
	}
	body := strings.TrimRight(msg, "\n") + "\n"
	return body + macTrailer + gitstore.KeyID(key) + " " + gateMAC(key, tree, body) + "\n", nil
}

// GateRecord is what a verified gate record says.
type GateRecord struct {
	Passed bool   // every required gate passed
	Set    string // the gate set it was run with (see GateSet)
	// Feature, Start and End: whose staging, and when (zero in a record
	// made before they were written).
	Feature    string
	Start, End time.Time
	Gates      int      // the gates that ran
	Failed     []string // the required ones that failed
}

// ReadGateRecord reads the gate record commit for tree. ok is false unless
// a trusted key made it for that tree: forged, copied from another
// machine, made before records were signed, or damaged.
func ReadGateRecord(s *gitstore.Store, record plumbing.Hash, tree string) (rec GateRecord, ok bool) {
	c, err := s.ReadCommit(record)
	if err != nil || c.TreeHash.String() != tree {
		return rec, false
	}
	i := strings.LastIndex(c.Message, "\n"+macTrailer)
	if i < 0 {
		return rec, false
	}
	body := c.Message[:i+1]
	f := strings.Fields(strings.TrimPrefix(c.Message[i+1:], macTrailer))
	if len(f) != 2 {
		return rec, false
	}
	keys, err := gateKeys(s)
	if err != nil || keys[f[0]] == nil {
		return rec, false
	}
	if !hmac.Equal([]byte(f[1]), []byte(gateMAC(keys[f[0]], tree, body))) {
		return rec, false
	}
	lines := strings.Split(body, "\n")
	rec.Passed = lines[0] == "gates passed on tree "+tree
	if v, ok := strings.CutPrefix(lines[0], "gates failed on tree "+tree+": "); ok {
		rec.Failed = strings.Split(v, ", ")
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, setTrailer):
			rec.Set = strings.TrimPrefix(l, setTrailer)
		case strings.HasPrefix(l, featureTrailer):
			rec.Feature = strings.TrimPrefix(l, featureTrailer)
		case strings.HasPrefix(l, gateTrailer):
			rec.Gates++
		case strings.HasPrefix(l, runTrailer):
			a, b, _ := strings.Cut(strings.TrimPrefix(l, runTrailer), " ")
			start, err1 := time.Parse(time.RFC3339Nano, a)
			end, err2 := time.Parse(time.RFC3339Nano, b)
			if err1 == nil && err2 == nil {
				rec.Start, rec.End = start, end
			}
		}
	}
	return rec, true
}

// PassedHere reports whether tree has a pass of set made in this
// repository: a record synced in from elsewhere, or forged, does not
// count, and the gates run again.
func PassedHere(s *gitstore.Store, tree, set string) bool {
	h, _ := s.ReadRef(gitstore.GatesRef(tree))
	if h.IsZero() {
		return false
	}
	rec, ok := ReadGateRecord(s, h, tree)
	return ok && rec.Passed && rec.Set == set
}
