package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/state/statetest"
)

// encoded is what WriteJSON makes of a task nested in a document's task
// list.
func encoded(t *testing.T, tj *Task) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(taskPrefix, "  ")
	if err := enc.Encode(tj); err != nil {
		t.Fatal(err)
	}
	return append([]byte(taskPrefix), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// TestTaskJSON holds the hand-written task encoder to encoding/json for
// tasks whose every field, state.Task's included, is set at random: a
// field added to Task and not to appendTask fails here.
func TestTaskJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		st := statetest.RandomTask(rng, i%2 == 0)
		for _, history := range []bool{false, true} {
			tj := TaskOf(st, history)
			want := encoded(t, &tj)
			got := appendTask(nil, &tj, taskPrefix)
			if !bytes.Equal(want, got) {
				t.Fatalf("task %d (history %v): appendTask differs from encoding/json%s", i, history, firstDiff(want, got))
			}
		}
	}
}

// notShown are the fields of state.Task no document shows, and why. A
// field added to state.Task must either change a document or be named
// here: TestEveryFieldShown says which.
var notShown = map[string]string{
	"Spec.Description":        "the prompt's, not the state's",
	"Spec.Level":              "the floor the plan applied: Level is where it put the task",
	"Spec.AcceptanceCriteria": "the prompt's",
	"Spec.Context":            "the prompt's",
	"Spec.Extra":              "kept for the graph file only",
	"Spec.Files.Extra":        "kept for the graph file only",
	"Spec.Verification.Extra": "kept for the graph file only",
	"Dependents":              "the inverse of the dependencies shown",
	"Owner":                   "the lease's owner; worker names the worker",
}

// leaves lists the paths of the settable leaves of v: a list or map is
// one leaf, a struct's fields and a pointer's target are walked.
func leaves(v reflect.Value, path string, out *[]string) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
	case v.Kind() == reflect.Pointer:
		leaves(v.Elem(), path, out)
		return
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() {
				leaves(v.Field(i), strings.TrimPrefix(path+"."+f.Name, "."), out)
			}
		}
		return
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		for i := 0; i < v.Len(); i++ {
			leaves(v.Index(i), path, out)
		}
		return
	}
	*out = append(*out, path)
}

// change alters every leaf at path.
func change(v reflect.Value, path string) {
	if path == "" {
		switch {
		case v.Type() == reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second)))
		case v.Kind() == reflect.String:
			v.SetString(v.String() + "x")
		case v.Kind() == reflect.Bool:
			v.SetBool(!v.Bool())
		case v.CanInt():
			v.SetInt(v.Int() + 1)
		case v.CanUint():
			v.SetUint(v.Uint() + 1)
		case v.CanFloat():
			v.SetFloat(v.Float() + 1)
		case v.Kind() == reflect.Slice:
			v.Set(reflect.Append(v, v.Index(0)))
		case v.Kind() == reflect.Map:
			for _, k := range v.MapKeys() {
				v.SetMapIndex(reflect.ValueOf(k.String()+"x").Convert(k.Type()), v.MapIndex(k))
			}
		default:
			panic("change: " + v.Type().String())
		}
		return
	}
	name, rest, _ := strings.Cut(path, ".")
	switch v.Kind() {
	case reflect.Pointer:
		change(v.Elem(), path)
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			change(v.Index(i), path)
		}
	default:
		change(v.FieldByName(name), rest)
	}
}

// TestEveryFieldShown changes each field of a task, one at a time: the
// status or export document must change with it, unless notShown says
// why not. A field added to state.Task fails here until it shows or is
// named.
func TestEveryFieldShown(t *testing.T) {
	doc := func(st *state.Task) []byte {
		a, b := TaskOf(st, false), TaskOf(st, true)
		return append(appendTask(nil, &a, ""), appendTask(nil, &b, "")...)
	}
	var paths []string
	leaves(reflect.ValueOf(statetest.RandomTask(rand.New(rand.NewPCG(3, 4)), true)), "", &paths)
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		base := statetest.RandomTask(rand.New(rand.NewPCG(3, 4)), true)
		changed := statetest.RandomTask(rand.New(rand.NewPCG(3, 4)), true)
		change(reflect.ValueOf(changed), p)
		shown := !bytes.Equal(doc(base), doc(changed))
		if why, hidden := notShown[p]; hidden && shown {
			t.Errorf("state.Task field %s shows in the documents, yet notShown says %q: take it out of notShown", p, why)
		} else if !hidden && !shown {
			t.Errorf("state.Task field %s changes no document: show it (report.Task, TaskOf and appendTask) or name it in notShown", p)
		}
	}
	for p := range notShown {
		if !seen[p] {
			t.Errorf("notShown names %s, which state.Task does not have", p)
		}
	}
}

func firstDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	return fmt.Sprintf(" at byte %d:\nwant …%q\ngot  …%q", i, want[max(0, i-80):min(len(want), i+80)], got[max(0, i-80):min(len(got), i+80)])
}

// TestFastTaskJSON holds the documents with task lists to WriteJSON of the
// same values.
func TestFastTaskJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tasks []Task
	for i := 0; i < 300; i++ {
		tasks = append(tasks, TaskOf(statetest.RandomTask(rng, false), i%2 == 0))
	}
	for _, n := range []int{0, 1, 5, 6, len(tasks)} {
		var want, got bytes.Buffer
		ex := Export{Format: 1, Feature: "f", Levels: [][]string{{"a"}}, Tasks: tasks[:n], Locks: []Lock{}, Workers: []Worker{}}
		if err := WriteJSON(&want, ex); err != nil {
			t.Fatal(err)
		}
		if err := ex.write(&got); err != nil {
			t.Fatal(err)
		}
		st := Status{Feature: "f", Progress: Progress{1, 2, 50}, Counts: map[string]int{"done": 1}, Tasks: tasks[:n],
			Levels: randomLevels(rng, n), Workers: []Worker{}, Locks: []Lock{}}
		if n > 0 {
			st.Spent = &Usage{CostUSD: 1.25, InputTokens: 1000, OutputTokens: 20, Turns: 3}
		}
		if err := WriteJSON(&want, st); err != nil {
			t.Fatal(err)
		}
		if err := st.write(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("%d tasks: documents differ%s", n, firstDiff(want.Bytes(), got.Bytes()))
		}
	}
}

// randomLevels are n levels, some of them with no task, nil lists and
// maps among them.
func randomLevels(rng *rand.Rand, n int) []Level {
	if n == 1 {
		return nil
	}
	out := []Level{}
	for i := 0; i < n%7; i++ {
		lv := Level{Level: i + 1, Done: rng.IntN(2) == 0}
		if rng.IntN(4) > 0 {
			statetest.Fill(rng, false, &lv.Tasks)
		}
		switch rng.IntN(3) {
		case 0:
			lv.Counts = map[string]int{}
		case 1:
			lv.Counts = map[string]int{"pending": rng.IntN(9), "done": rng.IntN(9), statetest.Strings[rng.IntN(len(statetest.Strings))]: 1}
		}
		out = append(out, lv)
	}
	return out
}

// write writes the document through writeDoc, as the commands do.
func (st *Status) write(w io.Writer) error {
	fields := []field{
		{name: "feature", value: st.Feature},
		{name: "complete", value: st.Complete},
		{name: "progress", value: st.Progress},
		{name: "counts", value: st.Counts},
		{name: "tasks", tasks: taskList(st.Tasks)},
		{name: "levels", value: st.Levels},
		{name: "workers", value: st.Workers},
		{name: "locks", value: st.Locks},
	}
	if st.Spent != nil {
		fields = append(fields, field{name: "spent", value: st.Spent})
	}
	return writeDoc(w, fields)
}

func (ex *Export) write(w io.Writer) error {
	return writeDoc(w, []field{
		{name: "format", value: ex.Format},
		{name: "feature", value: ex.Feature},
		{name: "levels", value: ex.Levels},
		{name: "tasks", tasks: taskList(ex.Tasks)},
		{name: "locks", value: ex.Locks},
		{name: "workers", value: ex.Workers},
	})
}

// taskList streams tasks rendered from ts.
func taskList(ts []Task) func(emit func([]byte) error) error {
	return func(emit func([]byte) error) error {
		var b []byte
		for i := range ts {
			b = appendTask(b[:0], &ts[i], taskPrefix)
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestTaskJSONRuns holds the runs of the hand-written encoder to
// encoding/json: random histories rarely hold a claim.
func TestTaskJSONRuns(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := statetest.RandomTask(rand.New(rand.NewPCG(3, 4)), true)
	st.History = []state.Event{
		{At: at, Op: state.OpClaim, From: state.Pending, To: state.Claimed, Worker: "worker-1"},
		{At: at.Add(time.Second), Op: state.OpFail, From: state.Claimed, To: state.Failed, Worker: "worker-1"},
		{At: at.Add(2 * time.Second), Op: state.OpBackoff, From: state.Failed, To: state.Pending},
		{At: at.Add(3 * time.Second), Op: state.OpClaim, From: state.Pending, To: state.Claimed, Worker: "worker-2"},
	}
	tj := TaskOf(st, false)
	if len(tj.Runs) != 2 || tj.Runs[0].End == nil || tj.Runs[0].Outcome != "failed" || tj.Runs[1].End != nil || tj.Runs[1].Attempt != 2 {
		t.Fatalf("runs = %+v", tj.Runs)
	}
	want := encoded(t, &tj)
	if got := appendTask(nil, &tj, taskPrefix); !bytes.Equal(want, got) {
		t.Fatalf("appendTask differs from encoding/json%s", firstDiff(want, got))
	}
}

// BenchmarkAppendTask is the hand-written encoder against encoding/json on
// the same tasks, histories included: what `status --json` and `export`
// spend per task.
func BenchmarkAppendTask(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	tasks := make([]Task, 64)
	for i := range tasks {
		tasks[i] = TaskOf(statetest.RandomTask(rng, true), true)
	}
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = appendTask(buf[:0], &tasks[i%len(tasks)], taskPrefix)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent(taskPrefix, "  ")
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := enc.Encode(&tasks[i%len(tasks)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
