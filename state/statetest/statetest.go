// Package statetest makes tasks for tests: every field of state.Task set
// by reflection, so that a field added to the state is exercised by every
// test that round-trips tasks, without the test knowing of it.
package statetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// Strings are the strings a task is filled with: the ones that exercise
// escaping and encodings, the empty one first.
var Strings = []string{"", "plain", "quote\" back\\slash", "tab\tnew\nline\r", "ctl\x01\x1f", "<html> & 'x'",
	"ünïcødé ✓", "bad \xff utf8", "sep \u2028 \u2029", "emoji 🚀"}

// filler sets every field of a value by reflection, so that a field added
// to state.Task (or to what it holds) is set too without this file
// knowing of it. full sets every leaf non-zero and every list non-empty;
// otherwise each may be zero, nil or empty, as stored tasks are.
type filler struct {
	rng  *rand.Rand
	full bool
}

var timeType = reflect.TypeFor[time.Time]()

func (f *filler) fill(v reflect.Value) {
	zero := !f.full && f.rng.IntN(4) == 0
	switch {
	case v.Type() == timeType:
		if !zero {
			loc := time.FixedZone("x", 3600*(f.rng.IntN(5)-2))
			v.Set(reflect.ValueOf(time.Unix(1.7e9+f.rng.Int64N(1e8), f.rng.Int64N(2)*123456789).In(loc)))
		}
		return
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
		return
	case zero:
		return
	}
	switch v.Kind() {
	case reflect.String:
		s := Strings[1+f.rng.IntN(len(Strings)-1)]
		if !f.full {
			s = Strings[f.rng.IntN(len(Strings))]
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1 + f.rng.Int64N(1000))
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		v.SetUint(1 + f.rng.Uint64N(1000))
	case reflect.Float64:
		v.SetFloat(float64(1+f.rng.IntN(1000)) / 7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		n := 1 + f.rng.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := 0; i < n; i++ {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		k.SetString(fmt.Sprint("k", f.rng.IntN(100)))
		if e.Type() == reflect.TypeFor[json.RawMessage]() {
			e.SetBytes([]byte(`"raw"`))
		} else {
			f.fill(e)
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		panic(fmt.Sprintf("filler: no values for %s: teach it", v.Type()))
	}
}

// RandomTask returns a task with every field set from rng. full sets every
// leaf non-zero and every list non-empty; otherwise each may be zero, nil
// or empty, as stored tasks are.
func RandomTask(rng *rand.Rand, full bool) *state.Task {
	t := &state.Task{}
	(&filler{rng, full}).fill(reflect.ValueOf(t).Elem())
	if t.Spec == nil {
		t.Spec = &levels.Task{}
	}
	return t
}

// Fill sets what ptr points to as RandomTask sets a task.
func Fill(rng *rand.Rand, full bool, ptr any) {
	(&filler{rng, full}).fill(reflect.ValueOf(ptr).Elem())
}

// Pending is n plan-fresh tasks T000, T001, …, of level 1, each
// verified by "true".
func Pending(n int) []*state.Task {
	var out []*state.Task
	for i := 0; i < n; i++ {
		out = append(out, &state.Task{
			Spec:   &levels.Task{ID: fmt.Sprintf("T%03d", i), Title: "t", Verification: levels.Verification{Command: "true"}},
			Level:  1,
			Status: state.Pending,
		})
	}
	return out
}
