package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLayoutNamesEveryPackage keeps docs/layout.md's package map true:
// its Layout table has one row for each directory of the module that holds
// a package (test-only packages and testdata aside), and no row for a
// package that is gone.
func TestLayoutNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("docs/layout.md has no Layout section")
	}
	// The package table is the section's first table.
	_, table, ok := strings.Cut(layout, "\n| package |")
	if !ok {
		t.Fatal("docs/layout.md's Layout section has no package table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/-]+)` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	var have []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			rel, _ := filepath.Rel(root, path)
			have = append(have, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range have {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s has no row in docs/layout.md's Layout table", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(have, p) {
			t.Errorf("docs/layout.md's Layout table names %s, which holds no package", p)
		}
	}
}
