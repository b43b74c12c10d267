// Package rushmarker keeps the file that says which process runs a rush
// on this host, and tells a live holder from a dead one.
package rushmarker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

// Marker says which process runs a feature's rush (or an epic's) on
// this host, so a second rush is refused and --resume can tell a dead rush
// from a live one. It lies below engine: a claim, cleanup and the epic
// status ask whether the rush that holds a claim or a feature is alive.
type Marker struct {
	path     string
	self     Holder
	previous *Holder // a dead rush found at start, whose claims we take back
}

// Path is the marker's file.
func (m *Marker) Path() string { return m.path }

// Self is this process as the marker holds it.
func (m *Marker) Self() Holder { return m.self }

// Previous is the dead rush whose marker this one replaced, nil when there
// was none: its claims are to be taken back.
func (m *Marker) Previous() *Holder { return m.previous }

// Holder is the process a rush marker names.
type Holder struct {
	PID     int    `json:"pid"`
	Started string `json:"started"` // process start time, against pid reuse
	Host    string `json:"host"`
	// Instance tells this clone from a copy of it (cp -r) that kept its
	// marker: there, the pid is another clone's rush, or nobody's.
	Instance string `json:"instance,omitempty"`
}

// Alive reports whether the holder's process still runs (same pid, same
// start time) on self, this clone's host.
func (h Holder) Alive(self gitstore.HostIdentity) bool {
	if !self.Holds(&state.Worker{Host: h.Host, Instance: h.Instance}) || h.PID <= 0 {
		return false
	}
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A killed rush stays a zombie until its parent (often init, or a
	// container's PID 1 that never reaps) waits for it: dead all the same.
	if f := proc.StatFields(h.PID); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
		return false
	}
	if h.Started != "" {
		if st := proc.StartTime(h.PID); st != "" && st != h.Started {
			return false
		}
	}
	return true
}

// Read reads who holds the rush marker of feature on this host: nil
// when none does, and whether that holder is alive (a dead one's marker
// stays until the next rush or cleanup takes it over).
func Read(s *gitstore.Store, feature string) (*Holder, bool) {
	b, err := os.ReadFile(s.Layout().Rush(feature))
	if err != nil {
		return nil, false
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil {
		return nil, false
	}
	return &h, h.Alive(s.Host())
}

// HeldError is Acquire's refusal while a live rush holds the marker.
type HeldError struct{ PID int }

func (e *HeldError) Error() string { return fmt.Sprintf("a rush is already running (pid %d)", e.PID) }

// ErrContended is Acquire's refusal when other processes kept taking the
// marker over while this one tried.
var ErrContended = errors.New("could not take the rush marker")

// Acquire takes the marker key (a path under the rush directory), refused
// with a HeldError while a live rush holds it.
func Acquire(s *gitstore.Store, key string) (*Marker, error) {
	path := s.Layout().Rush(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	host := s.Host()
	self := Holder{PID: os.Getpid(), Started: proc.StartTime(os.Getpid()), Host: host.Name, Instance: host.Instance}
	data, _ := json.Marshal(self)
	m := &Marker{path: path, self: self}
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(data)
			f.Close()
			return m, werr
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		var prev Holder
		b, _ := os.ReadFile(path)
		if json.Unmarshal(b, &prev) == nil && prev.Alive(host) {
			return nil, &HeldError{PID: prev.PID}
		}
		if json.Unmarshal(b, &prev) == nil {
			m.previous = &prev
		}
		// A dead holder: remove its marker and try again (another resumer
		// may win the O_EXCL race, and then we are refused above).
		os.Remove(path)
	}
	return nil, ErrContended
}

// Release removes the marker if it is still this process's.
func (m *Marker) Release() {
	b, err := os.ReadFile(m.path)
	if err != nil {
		return
	}
	var h Holder
	if json.Unmarshal(b, &h) == nil && h.PID == m.self.PID {
		os.Remove(m.path)
	}
}

// ClaimHolderAlive reports whether the rush process that holds a claim
// still runs on self, this clone's host: a claim whose rush died here is
// taken back by the next rush --resume, whatever its lease says.
func ClaimHolderAlive(self gitstore.HostIdentity, w *state.Worker) bool {
	return Holder{PID: w.PID, Started: w.Started, Host: w.Host, Instance: w.Instance}.Alive(self)
}
