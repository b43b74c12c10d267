package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// fullSpec is a spec with every field set, keys of its own included.
func fullSpec() *levels.Task {
	return &levels.Task{ID: "T1", Title: "t", Description: "d", Level: 2,
		Files: levels.Files{Create: []string{"a"}, Modify: []string{"b"}, Read: []string{"c"},
			Extra: map[string]json.RawMessage{"owner": json.RawMessage(`"x"`)}},
		Dependencies: []string{"T0"}, SoftDependencies: []string{"T9"}, AcceptanceCriteria: []string{"ac"},
		Context: []string{"ctx"}, Risk: "critical", Issue: 7,
		Verification: levels.Verification{Command: "true", TimeoutSeconds: 5,
			Extra: map[string]json.RawMessage{"retries": json.RawMessage(`1`)}},
		Extra: map[string]json.RawMessage{"steps": json.RawMessage(`["s"]`)}}
}

// Every field of a spec is in its digest: a field added to levels.Task
// that the digest missed would let another clone change it unseen. The
// fields are found by reflection, so a new one fails here until it is
// covered (or this test says why not).
func TestSpecDigestCoversEveryField(t *testing.T) {
	sp := fullSpec()
	base := SpecDigest(sp)
	if base == "" {
		t.Fatal("no digest")
	}
	// try changes one field, checks that the digest sees it, and puts it
	// back; a struct field (Files, Verification) has each of its fields
	// tried.
	var try func(name string, f reflect.Value)
	try = func(name string, f reflect.Value) {
		if f.Kind() == reflect.Struct {
			for i := 0; i < f.NumField(); i++ {
				try(name+"."+f.Type().Field(i).Name, f.Field(i))
			}
			return
		}
		old := reflect.New(f.Type()).Elem()
		old.Set(f)
		change(t, name, f)
		if SpecDigest(sp) == base {
			t.Errorf("changing %s leaves the digest as it was", name)
		}
		f.Set(old)
	}
	v := reflect.ValueOf(sp).Elem()
	for i := 0; i < v.NumField(); i++ {
		try(v.Type().Field(i).Name, v.Field(i))
	}
	if SpecDigest(sp) != base {
		t.Fatal("the spec did not come back as it was")
	}
}

// change gives a field another value.
func change(t *testing.T, name string, f reflect.Value) {
	t.Helper()
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Int:
		f.SetInt(f.Int() + 1)
	case reflect.Slice:
		f.Set(reflect.Append(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, f.Len()+1), f), reflect.ValueOf("more")))
	case reflect.Map:
		m := reflect.MakeMap(f.Type())
		m.SetMapIndex(reflect.ValueOf("new_key"), reflect.ValueOf(json.RawMessage(`true`)))
		f.Set(m)
	default:
		t.Fatalf("%s: a %s field this test cannot change", name, f.Kind())
	}
}

// A claim finds a task's line by a binary search in the file; it finds
// what reading the whole file finds, for every id and for ids that are
// not there (prefixes of others, before the first, after the last).
func TestTrustLookupInFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*state.Task
	for i := 0; i < 3000; i += 7 {
		id := fmt.Sprintf("T%d", i) // T1, T10, T100...: prefixes of one another
		tasks = append(tasks, &state.Task{Spec: &levels.Task{ID: id, Title: id, Risk: "high",
			Verification: levels.Verification{Command: "true"}}})
	}
	if err := Record(s, "f", tasks); err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks[:len(tasks)/3] {
		if err := Approve(s, "f", tk); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := Read(s, "f")
	if err != nil {
		t.Fatal(err)
	}
	opened, err := Open(s, "f")
	if err != nil || opened.path == "" {
		t.Fatalf("opened: %+v %v", opened, err)
	}
	for i := -1; i < 3010; i++ {
		id := fmt.Sprintf("T%d", i)
		wd, wa := whole.entry(id)
		od, oa := opened.entry(id)
		if wd != od || wa != oa {
			t.Fatalf("%s: read whole %q %v, searched %q %v", id, wd, wa, od, oa)
		}
		if (i >= 0 && i < 3000 && i%7 == 0) != (wd != "") {
			t.Fatalf("%s: %q", id, wd)
		}
	}
	for _, id := range []string{"", "A", "T", "Z", "T00"} {
		if d, _ := opened.entry(id); d != "" {
			t.Fatalf("%q found: %q", id, d)
		}
	}
}

// Approve gives nothing to a task this machine does not trust as it now
// is, and says why in an error its caller can tell from a failed write.
func TestApproveRefusesDistrusted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tk := &state.Task{Spec: &levels.Task{ID: "A", Title: "a", Risk: "high", Verification: levels.Verification{Command: "true"}}}
	err = Approve(s, "f", tk)
	var de *DistrustError
	if !errors.As(err, &de) || !strings.Contains(de.Why, "not planned or accepted") {
		t.Fatalf("Approve of a task never trusted here = %v, want a DistrustError saying why", err)
	}
	tr, _ := Read(s, "f")
	if tr.ApprovedHere(tk) {
		t.Error("the refused approval was recorded")
	}
}
