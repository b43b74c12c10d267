package lazy

import (
	"sync"
	"testing"
)

func TestValueBuildsOnce(t *testing.T) {
	n := 0
	v := &Value[int]{Build: func() int { n++; return 42 }}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := v.Get(); got != 42 {
				t.Errorf("Get = %d, want 42", got)
			}
		}()
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("built %d times, want once", n)
	}
}

func TestFuncRunsOnce(t *testing.T) {
	n := 0
	f := &Func{Run: func() { n++ }}
	f.Do()
	f.Do()
	if n != 1 {
		t.Fatalf("ran %d times, want once", n)
	}
}

// A Value at package level must need no code at start: the compiler lays
// it out, so the package has no initialisation function.
var static = &Value[[]string]{Build: func() []string { return []string{"a"} }}

func TestStatic(t *testing.T) {
	if got := static.Get(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("Get = %v", got)
	}
}
