package levels

import (
	"strings"
	"testing"
	"time"
)

func TestIsGlob(t *testing.T) {
	for p, want := range map[string]bool{
		"a*": true, "a?.go": true, "a[bc]": true, "**": true, "zerg/**/*.py": true,
		"a.go": false, "dir/": false, "a]": false, "": false, "a-b_c.d": false,
	} {
		if got := isGlob(p); got != want {
			t.Errorf("IsGlob(%q) = %v", p, got)
		}
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"a.go", "a.go", true},
		{"a.go", "b.go", false},
		{"src/a.go", "src/a.go.orig", false},
		{"src/", "src/a.go", true},
		{"src/", "src/x/y/z.go", true},
		{"src/", "srcx/a.go", false},
		{"src/", "src", false}, // a file and a directory never share a file
		{"src/", "src/", true},
		{"src/", "src/sub/", true},
		{"src/a/", "src/b/", false},
		{"zerg/**/*.py", "zerg/x/y.py", true},
		{"zerg/**/*.py", "zerg/x/y.go", true}, // conservative: glob counts as zerg/
		{"zerg/**/*.py", "zerg/", true},
		{"zerg/**/*.py", "zerg/sub/", true},
		{"zerg/**/*.py", "other/y.py", false},
		{"zerg/**/*.py", "zerg", false},
		{"*.go", "docs/x.md", true}, // a glob in the root owns the whole repository
		{"*.go", "docs/", true},
		{"src/*.go", "lib/*.go", false},
		{"src/*.go", "src/a/*.go", true},
		{"src/*.go", "src/**", true},
		{"a/b?c/d", "a/bxc/d", true},
		{"a/b?c/d", "b/bxc/d", false},
		{"a/[ab]/x", "a/c/x", true},
	}
	for _, tt := range tests {
		if got := Overlap(tt.a, tt.b); got != tt.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Overlap(tt.b, tt.a); got != tt.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, file string
		want          bool
	}{
		{"a.go", "a.go", true},
		{"a.go", "b.go", false},
		{"src/a.go", "src/a.go/x", false},
		{"src/", "src/a.go", true},
		{"src/", "src/x/y.go", true},
		{"src/", "src", false},
		{"src/", "srcx/a", false},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"cmd/*", "cmd/a", true},
		{"cmd/*", "cmd/a/b", false},
		{"zerg/**/*.py", "zerg/a.py", true},
		{"zerg/**/*.py", "zerg/x/y/z.py", true},
		{"zerg/**/*.py", "zerg/x/y.go", false},
		{"zerg/**/*.py", "other/a.py", false},
		{"**", "anything/at/all", true},
		{"**/test_*.py", "tests/unit/test_x.py", true},
		{"**/test_*.py", "test_x.py", true},
		{"**/test_*.py", "tests/x_test.py", false},
		{"a/**", "a/b", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/a", false},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		{"?.go", "a.go", true},
		{"?.go", "ab.go", false},
		{"?", "/", false},
		{"[ab].go", "a.go", true},
		{"[ab].go", "c.go", false},
		{"[^ab].go", "c.go", true},
		{"src/*/", "src/x/y.go", true},
		{"src/*/", "src/x", false},
		{"src/**/", "src/x", true},
		{"a[", "a[", true},
		{"a[", "ab", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.file); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.file, got, tt.want)
		}
	}
}

func TestMatchManyDoubleStarsIsFast(t *testing.T) {
	pattern := strings.Repeat("**/", 40) + "x"
	file := strings.Repeat("d/", 60) + "y"
	start := time.Now()
	if Match(pattern, file) {
		t.Error("matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// Overlap must be conservative: if some file is owned by both a and b,
// they overlap.
func TestOverlapCoversMatch(t *testing.T) {
	patterns := []string{"a.go", "src/a.go", "src/b.go", "src/", "src/sub/", "lib/", "*.go", "src/*.go",
		"src/**/*.go", "**", "src/sub/*", "src/s?b/x.go", "src/[sl]*/", "**/x.go", "lib/**"}
	files := []string{"a.go", "b.go", "src/a.go", "src/b.go", "src/sub/x.go", "src/sub/y.md", "src/lib/x.go",
		"lib/a.go", "lib/x/y.go", "x.go", "docs/x.go"}
	for _, a := range patterns {
		for _, b := range patterns {
			for _, f := range files {
				if Match(a, f) && Match(b, f) && !Overlap(a, b) {
					t.Errorf("%q and %q both match %q but do not overlap", a, b, f)
				}
			}
		}
	}
}
