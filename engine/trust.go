package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// State fetched from elsewhere (a clone sharing the remote, the forge) is
// never trusted to tell a worker anything or let it do anything: a task
// is handed to a worker, and its verification command run, only as this
// machine planned or accepted it (plan --accept). What is trusted is the
// digest of the task's whole spec (title, description, acceptance
// criteria, context, files, risk, dependencies, verification, the keys
// passed on as they are), so another clone that re-plans a task under the
// same id and command but with another description or wider files has it
// refused here until a person has seen the change.
//
// The trust file, .git/zerg/trusted/<feature>, is this machine's alone:
//
//	zerg-trust 2
//	<id> <sha256 of the spec> [approved]
//
// "approved" is an approval given here (git zerg approve) to that very
// spec: it does not survive a change of the task, and an approval that
// arrived in the shared state from another clone is not one. The specs
// accepted last are kept beside it, in .git/zerg/accepted/<feature>.json,
// for the next plan --accept to show what changed. A trust file of the
// first format ("<id> <sha256 of the command>" lines) trusts nothing: it
// said nothing of what the worker is told.
const trustFormat = "zerg-trust 2"

// SpecDigest is the digest of everything a task's spec tells or lets a
// worker do. The spec's encoding has its keys sorted and is the same on
// every machine; "" for a spec that cannot be encoded, which nothing
// matches.
func SpecDigest(sp *levels.Task) string {
	if sp == nil {
		return ""
	}
	b, err := sp.MarshalJSON()
	if err != nil {
		return ""
	}
	var c bytes.Buffer
	if json.Compact(&c, b) == nil {
		b = c.Bytes()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TrustFile is where a feature's trusted task digests are listed.
func TrustFile(s *gitstore.Store, feature string) string {
	return filepath.Join(s.ZergDir(), "trusted", feature)
}

// AcceptedFile is where the specs a feature's trust was given to are kept.
// A directory of its own: a feature may be named "x.json".
func AcceptedFile(s *gitstore.Store, feature string) string {
	return filepath.Join(s.ZergDir(), "accepted", feature+".json")
}

// trust is a feature's trust file as read.
type trust struct {
	lines []byte // the lines after the header, each ending in a newline
	// old: the file is of the first format, which trusts nothing now.
	old bool
}

func readTrust(s *gitstore.Store, feature string) (*trust, error) {
	b, err := os.ReadFile(TrustFile(s, feature))
	if errors.Is(err, fs.ErrNotExist) {
		return &trust{}, nil
	}
	if err != nil {
		return nil, err
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	if string(head) != trustFormat {
		return &trust{old: len(b) > 0}, nil
	}
	if len(rest) > 0 && rest[len(rest)-1] != '\n' {
		rest = append(rest, '\n')
	}
	return &trust{lines: rest}, nil
}

// entry is what the file says of one task: the digest trusted, and
// whether it was approved here.
func (tr *trust) entry(id string) (digest string, approved bool) {
	// One search through the bytes, not a map of every line: a claim asks
	// about one task of a feature that may hold 100,000.
	key := "\n" + id + " "
	data := tr.lines
	i := bytes.Index(data, []byte(key[1:]))
	if i != 0 {
		j := bytes.Index(data, []byte(key))
		if j < 0 {
			return "", false
		}
		i = j + 1
	}
	line := data[i+len(key)-1:]
	line = line[:bytes.IndexByte(line, '\n')]
	d, flag, _ := strings.Cut(string(line), " ")
	return d, flag == "approved"
}

// entries is every line of the file, by task id.
func (tr *trust) entries() map[string]trustEntry {
	out := map[string]trustEntry{}
	for _, line := range strings.Split(string(tr.lines), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out[f[0]] = trustEntry{digest: f[1], approved: len(f) > 2 && f[2] == "approved"}
		}
	}
	return out
}

type trustEntry struct {
	digest   string
	approved bool
}

// distrust says why this machine does not trust the task as it now is,
// "" when it does.
func (tr *trust) distrust(t *state.Task) string {
	if tr.old {
		return fmt.Sprintf("%s was accepted here by an older git-zerg, whose trust covered verification commands only", t.ID())
	}
	d, _ := tr.entry(t.ID())
	switch {
	case d == "":
		return fmt.Sprintf("%s was not planned or accepted on this machine", t.ID())
	case d != SpecDigest(t.Spec):
		return fmt.Sprintf("%s changed since it was planned or accepted on this machine", t.ID())
	}
	return ""
}

// approvedHere reports whether the task, as it now is, was approved on
// this machine.
func (tr *trust) approvedHere(t *state.Task) bool {
	if tr.old {
		return false
	}
	d, ok := tr.entry(t.ID())
	return ok && d == SpecDigest(t.Spec)
}

// check refuses a task this machine does not trust as it now is.
func (tr *trust) check(what string, t *state.Task, feature string) *Error {
	if why := tr.distrust(t); why != "" {
		return untrusted(what, why, feature)
	}
	return nil
}

// unapprovedHere refuses a task whose risk needs an approval that the
// shared state holds but this machine did not give.
func (tr *trust) unapprovedHere(what string, t *state.Task) *Error {
	if !t.NeedsApproval() || t.Approved == "" || tr.approvedHere(t) {
		return nil
	}
	return &Error{Kind: Refused, What: what, Why: approvalElsewhere(t), Hint: "git zerg approve " + t.ID()}
}

func approvalElsewhere(t *state.Task) string {
	return fmt.Sprintf("risk %s needs git zerg approve %s on this machine: the approval by %s was not given here to the task as it now is",
		t.Spec.Risk, t.ID(), t.Approved)
}

func untrusted(what, why, feature string) *Error {
	return &Error{Kind: Refused, What: what, Why: why,
		Hint: "git zerg plan --accept " + feature + " shows what changed and asks"}
}

// checkTrust refuses a task this machine does not trust as it now is.
func (g *Engine) checkTrust(what string, t *state.Task) error {
	tr, err := readTrust(g.Store, g.Feature)
	if err != nil {
		return err
	}
	if e := tr.check(what, t, g.Feature); e != nil {
		return e
	}
	return nil
}

// trustedAll refuses a rush, or a batch of task mode, whose graph holds a
// task this machine did not plan or accept as it now is, or an unfinished
// task whose approval came from elsewhere.
func (g *Engine) trustedAll(what string, tasks []*state.Task) error {
	tr, err := readTrust(g.Store, g.Feature)
	if err != nil {
		return err
	}
	trusted := tr.entries()
	var elsewhere []string
	for _, t := range tasks {
		if e, ok := trusted[t.ID()]; tr.old || !ok || e.digest != SpecDigest(t.Spec) {
			return untrusted(what, tr.distrust(t), g.Feature)
		}
		if t.Status != state.Done && tr.unapprovedHere(what, t) != nil {
			elsewhere = append(elsewhere, t.ID())
		}
	}
	if len(elsewhere) > 0 {
		t := tasksByID(tasks)[elsewhere[0]]
		e := tr.unapprovedHere(what, t)
		if len(elsewhere) > 1 {
			e.Why += fmt.Sprintf(" (also %s)", strings.Join(firstFew(elsewhere[1:], 5), ", "))
			e.Hint = "git zerg approve each of them"
		}
		return e
	}
	return nil
}

func tasksByID(tasks []*state.Task) map[string]*state.Task {
	out := make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		out[t.ID()] = t
	}
	return out
}

// Trust records the tasks as planned or accepted here: their digests, the
// specs themselves for the next plan --accept to compare with, and the
// approvals given here to tasks that did not change.
func Trust(s *gitstore.Store, feature string, tasks []*state.Task) error {
	before, err := readTrust(s, feature)
	if err != nil {
		return err
	}
	kept := before.entries()
	if before.old {
		kept = nil
	}
	sorted := append([]*state.Task(nil), tasks...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID() < sorted[j].ID() })
	var lines bytes.Buffer
	lines.WriteString(trustFormat + "\n")
	specs := accepted{Format: 2, Feature: feature, Tasks: make([]*levels.Task, 0, len(sorted))}
	for _, t := range sorted {
		d := SpecDigest(t.Spec)
		if d == "" {
			continue // nothing could match it: not worth a line
		}
		lines.WriteString(t.ID() + " " + d)
		if e := kept[t.ID()]; e.approved && e.digest == d {
			lines.WriteString(" approved")
		}
		lines.WriteByte('\n')
		specs.Tasks = append(specs.Tasks, t.Spec)
	}
	b, err := json.Marshal(&specs)
	if err != nil {
		return err
	}
	// The specs first: a trust file always has the specs it trusts beside
	// it, for the diff of the next accept.
	if err := writePrivate(AcceptedFile(s, feature), b); err != nil {
		return err
	}
	return writePrivate(TrustFile(s, feature), lines.Bytes())
}

// approveHere records that the task, as it now is, was approved on this
// machine. A task this machine does not trust as it is gets nothing.
func approveHere(s *gitstore.Store, feature string, t *state.Task) error {
	tr, err := readTrust(s, feature)
	if err != nil {
		return err
	}
	if tr.distrust(t) != "" {
		return untrusted("approve "+t.ID()+" refused", tr.distrust(t), feature)
	}
	if tr.approvedHere(t) {
		return nil
	}
	var out bytes.Buffer
	out.WriteString(trustFormat + "\n")
	for _, line := range strings.SplitAfter(string(tr.lines), "\n") {
		if strings.HasPrefix(line, t.ID()+" ") {
			line = strings.TrimSuffix(line, "\n") + " approved\n"
		}
		out.WriteString(line)
	}
	return writePrivate(TrustFile(s, feature), out.Bytes())
}

// accepted is the accepted specs file.
type accepted struct {
	Format  int            `json:"format"`
	Feature string         `json:"feature"`
	Tasks   []*levels.Task `json:"tasks"`
}

// writePrivate replaces a file at once (a reader never sees half of it),
// readable by this user alone: it says what runs here.
func writePrivate(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Review is what plan --accept shows before it trusts a feature's tasks:
// every task this machine does not trust as it now is, with the spec
// accepted here before when there was one.
type Review struct {
	Feature string
	// Tasks are all the feature's tasks as read: a yes trusts these, not
	// whatever the state holds by then.
	Tasks   []*state.Task
	Changed []ReviewedTask
	// Removed are tasks accepted here that the feature no longer has.
	Removed []string
	// Old: the trust recorded here is of the first format (commands only).
	Old bool
}

// ReviewedTask is one task of a Review.
type ReviewedTask struct {
	Task *state.Task
	// Accepted is the spec accepted here before; nil when the task is new
	// here.
	Accepted *levels.Task
	// ApprovedElsewhere: the shared state has it approved, not by this
	// machine; it still needs git zerg approve here.
	ApprovedElsewhere bool
}

// ReviewTrust reads what plan --accept of the feature would trust.
func ReviewTrust(s *gitstore.Store, feature string) (*Review, error) {
	tx, err := ViewFeature(s, feature)
	if err != nil {
		return nil, err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, err
	}
	tr, err := readTrust(s, feature)
	if err != nil {
		return nil, err
	}
	trusted := tr.entries()
	specs := map[string]*levels.Task{}
	if !tr.old {
		if b, err := os.ReadFile(AcceptedFile(s, feature)); err == nil {
			var a accepted
			if json.Unmarshal(b, &a) == nil {
				for _, sp := range a.Tasks {
					specs[sp.ID] = sp
				}
			}
		}
	}
	rv := &Review{Feature: feature, Tasks: tasks, Old: tr.old}
	have := map[string]bool{}
	for _, t := range tasks {
		have[t.ID()] = true
		e, ok := trusted[t.ID()]
		if !tr.old && ok && e.digest == SpecDigest(t.Spec) {
			continue
		}
		rt := ReviewedTask{Task: t, ApprovedElsewhere: t.NeedsApproval() && t.Approved != "" && t.Status != state.Done}
		// Only a spec that the trust file vouches for is "what was
		// accepted": the specs file alone is no record of a yes.
		if sp := specs[t.ID()]; ok && sp != nil && SpecDigest(sp) == e.digest {
			rt.Accepted = sp
		}
		rv.Changed = append(rv.Changed, rt)
	}
	if !tr.old {
		for id := range trusted {
			if !have[id] {
				rv.Removed = append(rv.Removed, id)
			}
		}
		sort.Strings(rv.Removed)
	}
	return rv, nil
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
