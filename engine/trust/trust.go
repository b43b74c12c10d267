// Package trust keeps what this clone vouches for, in sealed files of its
// own under .git/zerg/ that no push or fetch carries: the task specs
// planned, accepted or approved here, the specs accepted last (for the next
// plan --accept to show what changed), the state tip last checked, and the
// verifications that passed here. It holds no rule of the state machine:
// engine decides what a record allows.
package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

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
//	zerg-trust 3
//	<id> <sha256 of the spec> <approved or -> <seal>
//
// Each line is sealed with the repository's key (gitstore.Store.Seal), so
// a line a worker writes into the file with the file system trusts
// nothing. "approved" is an approval given here (git zerg approve) to that very
// spec: it does not survive a change of the task, and an approval that
// arrived in the shared state from another clone is not one. The specs
// accepted last are kept beside it, in .git/zerg/accepted/<feature>.json,
// for the next plan --accept to show what changed. A trust file of the
// first format ("<id> <sha256 of the command>" lines) trusts nothing: it
// said nothing of what the worker is told; nor does one of the second,
// whose lines were not sealed.
const trustFormat = "zerg-trust 3"

const trustDomain = "git-zerg trust"

// SpecDigest is the digest of everything a task's spec tells or lets a
// worker do; "" for a spec that cannot be encoded, which nothing matches.
func SpecDigest(sp *levels.Task) string {
	b, err := specBytes(sp)
	if err != nil {
		return ""
	}
	return digestOf(b)
}

func digestOf(spec []byte) string {
	sum := sha256.Sum256(spec)
	return hex.EncodeToString(sum[:])
}

// specBytes is the spec's encoding that its digest is of, the same on
// every machine: keys sorted, compact (the keys of its own that a task
// carries are kept as written, so they are compacted too).
func specBytes(sp *levels.Task) ([]byte, error) {
	if sp == nil {
		return nil, errors.New("no spec")
	}
	b, err := sp.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if len(sp.Extra) > 0 || len(sp.Files.Extra) > 0 || len(sp.Verification.Extra) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			return nil, err
		}
		b = c.Bytes()
	}
	return b, nil
}

// file is where a feature's trusted task digests are listed.
func file(s *gitstore.Store, feature string) string {
	return s.Layout().Trusted(feature)
}

// acceptedFile is where the specs a feature's trust was given to are kept.
// A directory of its own: a feature may be named "x.json".
func acceptedFile(s *gitstore.Store, feature string) string {
	return s.Layout().Accepted(feature)
}

// trust is a feature's trust file: read whole, or (Open) only its
// header, its lines searched in the file as asked.
type File struct {
	// lines are the lines after the header, each ending in a newline,
	// when the file was read whole.
	lines []byte
	// path and start: the file and where its lines begin, when it was
	// opened only.
	path  string
	start int64
	// old: the file is of an earlier format, which trusts nothing now.
	old bool
	// s and feature check each line's seal; a trust without a store
	// trusts nothing.
	s       *gitstore.Store
	feature string
}

// line reads what a line says after "<id> ", "" when its seal does not
// verify: written by anyone but git-zerg, or for another task or feature.
func (tr *File) line(id, rest string) (digest string, approved bool) {
	f := strings.Fields(rest)
	if tr.s == nil || len(f) != 4 || !tr.s.Sealed(f[2]+" "+f[3], trustDomain, tr.feature, id, f[0], f[1]) {
		return "", false
	}
	return f[0], f[1] == "approved"
}

// trustLine is a sealed line of the trust file, newline included.
func trustLine(key []byte, feature, id, digest string, approved bool) string {
	flag := "-"
	if approved {
		flag = "approved"
	}
	return id + " " + digest + " " + flag + " " + gitstore.KeyID(key) + " " + gitstore.MAC(key, trustDomain, feature, id, digest, flag) + "\n"
}

func Read(s *gitstore.Store, feature string) (*File, error) {
	b, err := os.ReadFile(file(s, feature))
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	if string(head) != trustFormat {
		return &File{old: len(b) > 0}, nil
	}
	if len(rest) > 0 && rest[len(rest)-1] != '\n' {
		rest = append(rest, '\n')
	}
	return &File{lines: rest, s: s, feature: feature}, nil
}

// Open reads the trust file's header alone: a claim, a done or an
// approve asks about a task or two, and the sorted lines are searched in
// the file for them (a few reads of 512 bytes) instead of reading 10 MB at
// 100,000 tasks.
func Open(s *gitstore.Store, feature string) (*File, error) {
	path := file(s, feature)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, len(trustFormat)+1)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if string(head[:n]) != trustFormat+"\n" {
		return &File{old: n > 0}, nil
	}
	return &File{path: path, start: int64(n), s: s, feature: feature}, nil
}

// entry is what the file says of one task: the digest trusted, and
// whether it was approved here.
func (tr *File) entry(id string) (digest string, approved bool) {
	var line string
	if tr.path != "" {
		line = lookLine(tr.path, tr.start, id)
	} else {
		line = findLine(tr.lines, id)
	}
	return tr.line(id, line)
}

// findLine returns what follows "<id> " on its line of lines, "" when no
// line is the id's.
func findLine(lines []byte, id string) string {
	key := "\n" + id + " "
	i := 0
	if !bytes.HasPrefix(lines, []byte(key[1:])) {
		j := bytes.Index(lines, []byte(key))
		if j < 0 {
			return ""
		}
		i = j + 1
	}
	line := lines[i+len(key)-1:]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	return string(line)
}

// maxTrustLine bounds a line of the trust file: an id of at most 64
// characters, a digest of 64, "approved", a seal of 81.
const maxTrustLine = 240

// lookLine is findLine on the lines of the file at path from start on,
// sorted by id as Trust writes them: a binary search over byte offsets.
// A file that cannot be read, or a line out of order, finds nothing: the
// task is then not trusted.
func lookLine(path string, start int64, id string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	// The line of id, if there is one, starts in [lo, hi); lo is a line
	// start, hi a line start or the end.
	lo, hi := start, fi.Size()
	buf := make([]byte, 4*maxTrustLine)
	for hi-lo > int64(len(buf)) {
		mid := lo + (hi-lo)/2
		n, _ := f.ReadAt(buf, mid)
		chunk := buf[:n]
		j := bytes.IndexByte(chunk, '\n')
		if j < 0 {
			return ""
		}
		next := mid + int64(j) + 1 // a line start past mid
		if next >= hi {
			break
		}
		rest := chunk[j+1:]
		k := bytes.IndexByte(rest, '\n')
		if k < 0 {
			return ""
		}
		lineID, line, _ := strings.Cut(string(rest[:k]), " ")
		switch {
		case lineID == id:
			return line
		case lineID < id:
			lo = next
		default:
			hi = next
		}
	}
	part := make([]byte, hi-lo)
	if n, _ := f.ReadAt(part, lo); int64(n) != hi-lo {
		return ""
	}
	return findLine(part, id)
}

// Old reports a file of an earlier format, which trusts nothing now.
func (tr *File) Old() bool { return tr.old }

// Entries is every line of the file whose seal verifies, by task id.
func (tr *File) Entries() map[string]Entry {
	out := map[string]Entry{}
	for _, line := range strings.Split(string(tr.lines), "\n") {
		id, rest, _ := strings.Cut(line, " ")
		if d, approved := tr.line(id, rest); d != "" {
			out[id] = Entry{Digest: d, Approved: approved}
		}
	}
	return out
}

// approvals are the digests that approvals given here were given to, by
// task id.
func (tr *File) approvals() map[string]string {
	out := map[string]string{}
	if tr.old || !bytes.Contains(tr.lines, []byte(" approved ")) {
		return out
	}
	for id, e := range tr.Entries() {
		if e.Approved {
			out[id] = e.Digest
		}
	}
	return out
}

// Entry is what the trust file says of one task: the digest of the spec
// trusted, and whether that spec was approved here.
type Entry struct {
	Digest   string
	Approved bool
}

// Distrust says why this machine does not trust the task as it now is,
// "" when it does.
func (tr *File) Distrust(t *state.Task) string {
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

// ApprovedHere reports whether the task, as it now is, was approved on
// this machine.
func (tr *File) ApprovedHere(t *state.Task) bool {
	if tr.old {
		return false
	}
	d, ok := tr.entry(t.ID())
	return ok && d == SpecDigest(t.Spec)
}

// Record records the tasks as planned or accepted here: their digests, the
// specs themselves for the next plan --accept to compare with, and the
// approvals given here to tasks that did not change.
func Record(s *gitstore.Store, feature string, tasks []*state.Task) error {
	before, err := Read(s, feature)
	if err != nil {
		return err
	}
	approved := before.approvals()
	key, err := s.Key(true)
	if err != nil {
		return err
	}
	sorted := append([]*state.Task(nil), tasks...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID() < sorted[j].ID() })
	enc := encodeSpecs(sorted)
	var lines, specs bytes.Buffer
	size := 0
	for _, b := range enc {
		size += len(b) + 1
	}
	lines.Grow(len(sorted) * 96)
	specs.Grow(size + 64)
	lines.WriteString(trustFormat + "\n")
	// The accepted file is written out by hand: each spec's encoding is
	// the one its digest was taken of, and json.Marshal would check and
	// compact every byte of it again (a second at 100,000 tasks).
	name, _ := json.Marshal(feature)
	fmt.Fprintf(&specs, `{"format":2,"feature":%s,"tasks":[`, name)
	n := 0
	for i, t := range sorted {
		if enc[i] == nil {
			continue // nothing could match it: not worth a line
		}
		d := digestOf(enc[i])
		lines.WriteString(trustLine(key, feature, t.ID(), d, approved[t.ID()] == d))
		if n > 0 {
			specs.WriteByte(',')
		}
		specs.Write(enc[i])
		n++
	}
	specs.WriteString("]}\n")
	// The specs first: a trust file always has the specs it trusts beside
	// it, for the diff of the next accept.
	if err := gitstore.WritePrivate(acceptedFile(s, feature), specs.Bytes()); err != nil {
		return err
	}
	return gitstore.WritePrivate(file(s, feature), lines.Bytes())
}

// encodeSpecs encodes the tasks' specs (nil for one that cannot be), on
// every processor: a plan of 100,000 tasks waits for it.
func encodeSpecs(tasks []*state.Task) [][]byte {
	out := make([][]byte, len(tasks))
	workers := min(runtime.GOMAXPROCS(0), len(tasks)/1024+1)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(tasks); i += workers {
				out[i], _ = specBytes(tasks[i].Spec)
			}
		}(w)
	}
	wg.Wait()
	return out
}

// Approve records that the task, as it now is, was approved on this
// machine. A task this machine does not trust as it is gets nothing.
func Approve(s *gitstore.Store, feature string, t *state.Task) error {
	tr, err := Read(s, feature)
	if err != nil {
		return err
	}
	if why := tr.Distrust(t); why != "" {
		return &DistrustError{Why: why}
	}
	if tr.ApprovedHere(t) {
		return nil
	}
	key, err := s.Key(true)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.WriteString(trustFormat + "\n")
	for _, line := range strings.SplitAfter(string(tr.lines), "\n") {
		if id, rest, _ := strings.Cut(line, " "); id == t.ID() {
			d, _ := tr.line(id, strings.TrimSuffix(rest, "\n"))
			line = trustLine(key, feature, id, d, true)
		}
		out.WriteString(line)
	}
	return gitstore.WritePrivate(file(s, feature), out.Bytes())
}

// DistrustError is Approve's refusal of a task this machine does not
// trust as it now is; Why says so, for the caller's own error.
type DistrustError struct{ Why string }

func (e *DistrustError) Error() string { return e.Why }

// accepted is the accepted specs file.
type accepted struct {
	Format  int            `json:"format"`
	Feature string         `json:"feature"`
	Tasks   []*levels.Task `json:"tasks"`
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

// ReviewOf is what plan --accept of the feature would trust, of its tasks
// as read now.
func ReviewOf(s *gitstore.Store, feature string, tasks []*state.Task) (*Review, error) {
	tr, err := Read(s, feature)
	if err != nil {
		return nil, err
	}
	trusted := tr.Entries()
	specs := map[string]*levels.Task{}
	if !tr.old {
		if b, err := os.ReadFile(acceptedFile(s, feature)); err == nil {
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
		if !tr.old && ok && e.Digest == SpecDigest(t.Spec) {
			continue
		}
		rt := ReviewedTask{Task: t, ApprovedElsewhere: t.NeedsApproval() && t.Approved != "" && t.Status != state.Done}
		// Only a spec that the trust file vouches for is "what was
		// accepted": the specs file alone is no record of a yes.
		if sp := specs[t.ID()]; ok && sp != nil && SpecDigest(sp) == e.Digest {
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
