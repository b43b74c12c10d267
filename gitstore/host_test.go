package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/git-zerg/git-zerg/state"
)

// TestHostConcurrent asks for the host identity from many goroutines at
// once, on one store and on stores of their own opened on a clone that has
// none yet (run it with -race): every answer is the same identity, made
// once into .git/zerg/host-id, and no temporary file is left.
func TestHostConcurrent(t *testing.T) {
	t.Setenv("ZERG_HOST", "")
	dir := newRepo(t)
	shared := openStore(t, dir)
	const n = 16
	got := make([]HostIdentity, 2*n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			got[i] = shared.Host()
		}()
		go func() {
			defer wg.Done()
			got[n+i] = openStore(t, dir).Host()
		}()
	}
	wg.Wait()
	if !regexp.MustCompile(`^[A-Za-z0-9._-]+-[0-9a-f]{8}$`).MatchString(got[0].Name) || got[0].Instance == "" {
		t.Fatalf("identity %+v, want <machine>-<8 hex digits> and an instance", got[0])
	}
	for i, h := range got {
		if h != got[0] {
			t.Fatalf("answer %d is %+v, answer 0 %+v", i, h, got[0])
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", "zerg", "host-id"))
	if err != nil || !strings.HasPrefix(string(b), got[0].Name+"\n") {
		t.Fatalf("host-id holds %q (%v), want %s first", b, err, got[0].Name)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "zerg", "host-id.tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestHostCopiedClone copies a clone with cp -r: the copy presents the
// same name but another instance, and knows where its host-id was made
// and that the original is still there, so a lease of either is a clash
// for the other; a clone moved with mv stays itself. ZERG_HOST overrides
// the name, not the instance.
func TestHostCopiedClone(t *testing.T) {
	t.Setenv("ZERG_HOST", "")
	dir := newRepo(t)
	orig := openStore(t, dir).Host()
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-r", dir, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -r: %v\n%s", err, out)
	}
	cp := openStore(t, copied).Host()
	if cp.Name != orig.Name || cp.Instance == orig.Instance || cp.MadeIn != realPath(filepath.Join(dir, ".git")) || !cp.Twin ||
		orig.MadeIn != "" || orig.Twin {
		t.Fatalf("original %+v, copy %+v: want one name, two instances, the copy naming the original", orig, cp)
	}
	lease := func(h HostIdentity) *state.Worker {
		return &state.Worker{Name: "w", Host: h.Name, Instance: h.Instance}
	}
	if !orig.Holds(lease(orig)) || orig.Clash(lease(orig)) || !orig.Clash(lease(cp)) || orig.Holds(lease(cp)) || !cp.Clash(lease(orig)) {
		t.Error("a lease of one clone is not told from the other's")
	}
	if old := (&state.Worker{Host: orig.Name}); !orig.Holds(old) || orig.Clash(old) || cp.Clash(old) {
		t.Error("a lease without an instance (an older git-zerg's) is not taken by its name alone")
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if mv := openStore(t, moved).Host(); mv.Name != orig.Name || mv.Instance != orig.Instance || mv.Twin {
		t.Errorf("moved, the original became %+v, was %+v", mv, orig)
	}
	if c := openStore(t, copied).Host(); c.Twin || c.Instance != cp.Instance {
		t.Errorf("with its original moved away, the copy is %+v", c)
	}
	t.Setenv("ZERG_HOST", "ci-7")
	a, b := openStore(t, moved).Host(), openStore(t, copied).Host()
	if a.Name != "ci-7" || b.Name != "ci-7" || a.Instance == b.Instance || a.MadeIn != "" {
		t.Errorf("with ZERG_HOST: %+v and %+v", a, b)
	}
}

// TestHostBadFile: a host-id that holds no name is not taken for one; the
// identity says why, and a name written there by hand is taken.
func TestHostBadFile(t *testing.T) {
	t.Setenv("ZERG_HOST", "")
	dir := newRepo(t)
	file := filepath.Join(dir, ".git", "zerg", "host-id")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte("two words\n"), 0o644)
	if h := openStore(t, dir).Host(); h.Err == nil || !strings.Contains(h.Err.Error(), "is not a host identity") {
		t.Errorf("a bad host-id gave %+v", h)
	}
	os.WriteFile(file, []byte("runner-3\n"), 0o644)
	if h := openStore(t, dir).Host(); h.Err != nil || h.Name != "runner-3" {
		t.Errorf("a name written by hand gave %+v", h)
	}
}
