package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// fileState is a file's content (a symlink's target) and mode.
type fileState struct {
	data string
	mode os.FileMode
}

// snapshot records every file of dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		var data string
		if fi.Mode()&os.ModeSymlink != 0 {
			data, err = os.Readlink(p)
		} else {
			var b []byte
			b, err = os.ReadFile(p)
			data = string(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fileState{data, fi.Mode()}
	}
	return out
}

func sameSnapshot(t *testing.T, got, want map[string]fileState) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s is gone", name)
		case g.data != w.data:
			t.Errorf("%s: content changed:\n%q\nwant\n%q", name, g.data, w.data)
		case g.mode != w.mode:
			t.Errorf("%s: mode %v, want %v", name, g.mode, w.mode)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s was left behind", name)
		}
	}
}

func actions(cs []Change) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Name+":"+c.Action)
	}
	return strings.Join(s, " ")
}

func TestInstallUninstallRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// An existing pre-commit with an odd mode and no trailing newline, a
	// sample file git ships, no pre-push.
	legacy := "#!/bin/sh\necho mine\nexit 0"
	if err := os.WriteFile(filepath.Join(dir, "pre-commit"), []byte(legacy), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pre-push.sample"), []byte("sample"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	cs, err := writeHooks(dir, "/opt/zerg/bin/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); got != "pre-commit:installed pre-push:installed" {
		t.Fatalf("install: %s", got)
	}
	if cs[0].Legacy != filepath.Join(dir, "pre-commit"+legacySuffix) || cs[1].Legacy != "" {
		t.Errorf("legacy: %q %q", cs[0].Legacy, cs[1].Legacy)
	}
	kept := snapshot(t, dir)["pre-commit"+legacySuffix]
	if kept != before["pre-commit"] {
		t.Errorf("kept hook %+v, want %+v", kept, before["pre-commit"])
	}
	hs, err := Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.State != Installed || h.Binary != "/opt/zerg/bin/git-zerg" {
			t.Errorf("status %+v", h)
		}
	}
	if hs[0].Legacy == "" || hs[1].Legacy != "" {
		t.Errorf("status legacy: %+v", hs)
	}

	installed := snapshot(t, dir)
	cs, err = writeHooks(dir, "/opt/zerg/bin/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); got != "pre-commit:unchanged pre-push:unchanged" {
		t.Fatalf("second install: %s", got)
	}
	sameSnapshot(t, snapshot(t, dir), installed)

	cs, err = removeHooks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); got != "pre-commit:restored pre-push:removed" {
		t.Fatalf("uninstall: %s", got)
	}
	sameSnapshot(t, snapshot(t, dir), before)

	cs, err = removeHooks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); got != "pre-commit:kept pre-push:absent" {
		t.Fatalf("second uninstall: %s", got)
	}
	sameSnapshot(t, snapshot(t, dir), before)
}

func TestInstallKeepsSymlinkAndNonExecutableHooks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("../../tools/pre-commit.sh", filepath.Join(dir, "pre-commit")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pre-push"), []byte("#!/bin/sh\nexit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	if _, err := writeHooks(dir, "/x/git-zerg"); err != nil {
		t.Fatal(err)
	}
	if _, err := removeHooks(dir); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, snapshot(t, dir), before)
}

func TestInstallNewBinaryUpdates(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeHooks(dir, "/a/git-zerg"); err != nil {
		t.Fatal(err)
	}
	cs, err := writeHooks(dir, "/b/it's here/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); got != "pre-commit:updated pre-push:updated" {
		t.Fatalf("install: %s", got)
	}
	hs, _ := Status(dir)
	if hs[0].Binary != "/b/it's here/git-zerg" {
		t.Errorf("binary %q", hs[0].Binary)
	}
}

func TestInstallConflict(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"pre-commit", "pre-commit" + legacySuffix} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n# "+f+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	_, err := writeHooks(dir, "/x/git-zerg")
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	sameSnapshot(t, snapshot(t, dir), before)
}

// runHook runs an installed hook script as git would.
func runHook(t *testing.T, hook string, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(hook, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestScriptChainsLegacyAndFindsBinary(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	hooksDir := filepath.Join(dir, "hooks")
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(hooksDir, 0o755)
	os.MkdirAll(bin, 0o755)
	log := filepath.Join(dir, "log")
	// A fake git-zerg and a legacy pre-push that record their arguments
	// and stdin.
	fake := "#!/bin/sh\n{ echo \"zerg $*\"; cat; } >> " + log + "\nexit ${FAKE_EXIT:-0}\n"
	if err := os.WriteFile(filepath.Join(bin, "git-zerg"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	legacy := "#!/bin/sh\n{ echo \"legacy $*\"; cat; } >> " + log + "\nexit ${LEGACY_EXIT:-0}\n"
	for _, h := range Names {
		if err := os.WriteFile(filepath.Join(hooksDir, h), []byte(legacy), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeHooks(hooksDir, filepath.Join(bin, "git-zerg")); err != nil {
		t.Fatal(err)
	}
	readLog := func() string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		return string(b)
	}
	base := []string{"PATH=/usr/bin:/bin"}
	push := filepath.Join(hooksDir, "pre-push")
	input := "refs/heads/main 1111111111111111111111111111111111111111 refs/heads/main 0000000000000000000000000000000000000000\n" +
		"refs/heads/x 2222222222222222222222222222222222222222 refs/heads/x 3333333333333333333333333333333333333333\n"

	t.Run("pre-push stdin reaches both, legacy first", func(t *testing.T) {
		_, stderr, code := runHook(t, push, base, input, "origin", "https://example.com/r.git")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		want := "legacy origin https://example.com/r.git\n" + input + "zerg hook pre-push origin https://example.com/r.git\n" + input
		if got := readLog(); got != want {
			t.Errorf("log:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("legacy failure stops the hook with its code", func(t *testing.T) {
		_, _, code := runHook(t, push, append(base, "LEGACY_EXIT=7"), input, "origin", "u")
		if code != 7 {
			t.Errorf("exit %d, want 7", code)
		}
		if got := readLog(); strings.Contains(got, "zerg") {
			t.Errorf("git-zerg ran after a failed legacy hook:\n%s", got)
		}
	})
	t.Run("git-zerg refusal is the hook's", func(t *testing.T) {
		_, _, code := runHook(t, filepath.Join(hooksDir, "pre-commit"), append(base, "FAKE_EXIT=1"), "")
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if got := readLog(); got != "legacy \nzerg hook pre-commit\n" {
			t.Errorf("log %q", got)
		}
	})
	t.Run("internal commits skip the check after the legacy hook", func(t *testing.T) {
		_, _, code := runHook(t, filepath.Join(hooksDir, "pre-commit"), append(base, "GIT_ZERG_INTERNAL=1", "FAKE_EXIT=1"), "")
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if got := readLog(); got != "legacy \n" {
			t.Errorf("log %q", got)
		}
	})
	t.Run("recorded path gone: PATH", func(t *testing.T) {
		if _, err := writeHooks(hooksDir, filepath.Join(dir, "gone", "git-zerg")); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runHook(t, filepath.Join(hooksDir, "pre-commit"), []string{"PATH=" + bin + ":/usr/bin:/bin"}, "")
		if code != 0 || readLog() != "legacy \nzerg hook pre-commit\n" {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("binary gone: warn and let it through", func(t *testing.T) {
		_, stderr, code := runHook(t, push, append(base, "FAKE_EXIT=1"), input, "origin", "u")
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if !strings.Contains(stderr, "git-zerg: not found; pre-push checks skipped") {
			t.Errorf("stderr %q", stderr)
		}
		if got := readLog(); got != "legacy origin u\n"+input {
			t.Errorf("log %q", got)
		}
	})
}

// gitInit makes a repository with one commit and returns its top.
func gitInit(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main", ".")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "initial")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestDir(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	top := gitInit(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "w", wt)
	ctx := context.Background()
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, d := range []string{top, wt} {
		got, err := gitHooksDir(ctx, &gitcmd.Runner{Dir: d})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(real(top), ".git", "hooks"); real(filepath.Dir(got)) != filepath.Dir(want) || filepath.Base(got) != "hooks" {
			t.Errorf("Dir(%s) = %s, want %s (shared by every worktree)", d, got, want)
		}
	}
	git(t, top, "config", "core.hooksPath", "ci/hooks")
	got, err := gitHooksDir(ctx, &gitcmd.Runner{Dir: top})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(real(top), "ci", "hooks"); got != want {
		t.Errorf("with core.hooksPath: %s, want %s", got, want)
	}
}

func TestZergAbsent(t *testing.T) {
	top := gitInit(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "w", wt)
	for _, d := range []string{top, wt} {
		if !zergAbsent(d) {
			t.Errorf("ZergAbsent(%s) = false in a repository without refs/zerg", d)
		}
	}
	if zergAbsent(filepath.Join(top, ".git")) || zergAbsent(t.TempDir()) {
		t.Error("ZergAbsent is sure away from a work tree top")
	}
	git(t, top, "update-ref", "refs/zerg/locks", "HEAD")
	for _, d := range []string{top, wt} {
		if zergAbsent(d) {
			t.Errorf("ZergAbsent(%s) with a loose refs/zerg ref", d)
		}
	}
	git(t, top, "pack-refs", "--all")
	os.RemoveAll(filepath.Join(top, ".git", "refs", "zerg"))
	if zergAbsent(top) {
		t.Error("ZergAbsent with a packed refs/zerg ref")
	}
}

func TestGatesPassed(t *testing.T) {
	top := gitInit(t)
	s, err := gitstore.Open(context.Background(), top)
	if err != nil {
		t.Fatal(err)
	}
	commit := git(t, top, "rev-parse", "HEAD")
	tree := git(t, top, "rev-parse", "HEAD^{tree}")
	set := GateSet(nil)
	passed := func(rev string) bool { ok, _ := gatesPassed(s, rev, set); return ok }
	if passed(commit) || passed(tree) || passed("nonsense") {
		t.Fatal("gates passed without a record")
	}
	record := func(msg string) string {
		t.Helper()
		return git(t, top, "commit-tree", tree, "-p", commit, "-m", msg)
	}
	signed := func(subject, set string) string {
		t.Helper()
		msg, err := SignGateRecord(s, tree, subject+"\n\nZerg-Gates: "+set+"\n")
		if err != nil {
			t.Fatal(err)
		}
		return record(msg)
	}
	git(t, top, "update-ref", gatesRef(tree), record("gates passed on tree "+tree+"\n\nZerg-Gates: "+set))
	if passed(commit) {
		t.Fatal("an unsigned record counts")
	}
	git(t, top, "update-ref", gatesRef(tree), signed("gates passed on tree "+tree, set))
	if !passed(commit) || !passed(tree) {
		t.Fatal("gates record not seen")
	}
	if fi, err := os.Stat(gitstore.KeyFile(s)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	// Another commit with the same tree passed too: gates see content.
	git(t, top, "commit", "-q", "--allow-empty", "-m", "same tree")
	if !passed(git(t, top, "rev-parse", "HEAD")) {
		t.Error("same tree, other commit: not passed")
	}
	// A failed run's record, copied to the pass ref, or a pass of other gates.
	git(t, top, "update-ref", gatesRef(tree), signed("gates failed on tree "+tree+": test", set))
	if passed(commit) {
		t.Error("a failed record counts as a pass")
	}
	git(t, top, "update-ref", gatesRef(tree), signed("gates passed on tree "+tree, GateSet([]config.Gate{{Name: "x"}})))
	if ok, why := gatesPassed(s, commit, set); ok || !strings.Contains(why, "gates changed") {
		t.Errorf("a pass of other gates: %v %q", ok, why)
	}
	// A record edited after signing, or signed for another tree.
	good := signed("gates passed on tree "+tree, set)
	body := git(t, top, "log", "-1", "--format=%B", good)
	git(t, top, "update-ref", gatesRef(tree), record(strings.Replace(body, "Zerg-Gates: "+set, "Zerg-Gates: "+set+"\nextra", 1)))
	if passed(commit) {
		t.Error("an edited record counts")
	}
	// A record made with another repository's key (as sync brings in).
	other := gitInit(t)
	so, err := gitstore.Open(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := SignGateRecord(so, tree, "gates passed on tree "+tree+"\n\nZerg-Gates: "+set+"\n")
	if err != nil {
		t.Fatal(err)
	}
	git(t, top, "update-ref", gatesRef(tree), record(msg))
	if ok, why := gatesPassed(s, commit, set); ok || !strings.Contains(why, "not made in this repository") {
		t.Errorf("another repository's record: %v %q", ok, why)
	}
}

func TestParsePush(t *testing.T) {
	in := "refs/heads/a 1111111111111111111111111111111111111111 refs/heads/a 0000000000000000000000000000000000000000\n" +
		"(delete) 0000000000000000000000000000000000000000 refs/heads/b 2222222222222222222222222222222222222222\n"
	ls, err := parsePush(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || !ls[0].NewRef() || ls[0].Deletion() || !ls[1].Deletion() || ls[1].NewRef() {
		t.Errorf("%+v", ls)
	}
	if _, err := parsePush(strings.NewReader("refs/heads/a 111\n")); err == nil {
		t.Error("bad line accepted")
	}
}

func TestParseLog(t *testing.T) {
	a := strings.Repeat("a", 40)
	b := strings.Repeat("b", 40)
	raw := "\x01" + a + "\x00\nsrc/x y.go\x00src/z\x00\x01" + b + "\x00\x00\x01" + a + "\x00\nd\x00"
	got := commitPaths(gitcmd.ParseLogFiles([]byte(raw)))
	want := []commitPath{{a, "src/x y.go"}, {a, "src/z"}, {a, "d"}}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestBranchNames(t *testing.T) {
	if f, w, ok := workerBranch("zerg/auth/worker-3"); !ok || f != "auth" || w != "worker-3" {
		t.Error("worker branch")
	}
	for _, b := range []string{"zerg/auth/staging", "main", "zerg/auth/worker-1/x", "zerg/worker-1"} {
		if _, _, ok := workerBranch(b); ok {
			t.Errorf("%s taken for a worker branch", b)
		}
	}
	if f, ok := stagingBranch("refs/heads/zerg/auth/staging"); !ok || f != "auth" {
		t.Error("staging branch")
	}
	for _, r := range []string{"refs/heads/zerg/staging", "refs/heads/zerg/a/b/staging", "refs/tags/zerg/a/staging", "zerg/a/staging"} {
		if _, ok := stagingBranch(r); ok {
			t.Errorf("%s taken for staging", r)
		}
	}
}
