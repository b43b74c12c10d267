package hooks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/agent/agenttest"
	"github.com/git-zerg/git-zerg/gitstore"
)

// The hook managers people use beside git-zerg, for real: husky and
// lefthook as npm installs them (pinned in testdata/hookmanagers, installed
// into the cache outside the repository when missing), the pre-commit
// framework as the distribution packages it. In each order of installation
// and after the manager installs itself again (as `npm install` re-runs
// husky), a commit runs the manager's hook and git-zerg's check: a commit of
// a path another worker holds is refused, one of a free path is made, and
// the manager's hook ran for both.

// managers is a repository's test bed: the git-zerg binary, the managers'
// commands on PATH, the log the managers' hooks write to.
type managers struct {
	t    *testing.T
	zerg string
	top  string
	env  []string
	log  string
	path string // where the managers' commands are
}

func newManagers(t *testing.T, bin, path string) *managers {
	t.Helper()
	top := gitInit(t)
	m := &managers{t: t, zerg: bin, top: top, log: filepath.Join(t.TempDir(), "hooks.log"), path: path}
	m.env = []string{"PATH=" + path + string(os.PathListSeparator) + os.Getenv("PATH"), "HOOK_LOG=" + m.log,
		"PRE_COMMIT_HOME=" + filepath.Join(t.TempDir(), "pre-commit"), "HOME=" + t.TempDir()}
	return m
}

// run runs a command in the repository, failing the test when it fails.
func (m *managers) run(name string, args ...string) string {
	m.t.Helper()
	if p := filepath.Join(m.path, name); m.path != "" && isExecutable(p) {
		name = p
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = m.top
	cmd.Env = append(cleanEnv(), m.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (m *managers) write(name, content string, mode os.FileMode) {
	m.t.Helper()
	p := filepath.Join(m.top, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		m.t.Fatal(err)
	}
}

// commit adds and commits the files a manager's set-up needs, with every
// hook skipped: that set-up is not what is tested.
func (m *managers) commit(paths ...string) {
	m.t.Helper()
	m.run("git", append([]string{"add"}, paths...)...)
	m.run("git", "commit", "-q", "--no-verify", "-m", "set up")
}

// bothRun checks that a commit runs the manager's hook (which logs want)
// and git-zerg's check.
func (m *managers) bothRun(when, want string) {
	m.t.Helper()
	os.Remove(m.log)
	if out := m.run(m.zerg, "status"); strings.Contains(out, "hook") {
		m.t.Errorf("%s: status warns about the hooks:\n%s", when, out)
	}
	m.write("shared.txt", when, 0o644)
	m.run("git", "add", "shared.txt")
	stderr, ok := runIn(m.t, m.top, m.env, "git", "commit", "-q", "-m", "shared")
	if ok || !strings.Contains(stderr, "shared.txt: locked by alice@") {
		m.t.Errorf("%s: commit of a locked path: ok=%v, stderr %q", when, ok, stderr)
	}
	m.run("git", "reset", "-q", "shared.txt")
	m.write("free.txt", when, 0o644)
	m.run("git", "add", "free.txt")
	if stderr, ok := runIn(m.t, m.top, m.env, "git", "commit", "-q", "-m", "free"); !ok {
		m.t.Errorf("%s: commit of a free path refused: %s", when, stderr)
	}
	b, _ := os.ReadFile(m.log)
	if got := strings.Count(string(b), want+"\n"); got != 2 {
		m.t.Errorf("%s: the manager's hook ran %d times for two commits, want 2; its log:\n%s", when, got, b)
	}
}

// zergInit makes the repository git-zerg's, with a path another worker
// holds. Its hooks are installed by the test, in the order it tests.
func (m *managers) zergInit() {
	m.t.Helper()
	m.run(m.zerg, "init")
	m.run(m.zerg, "hooks", "uninstall")
	m.write("graph.json", `{"feature": "demo", "tasks": [{"id": "T1", "title": "one", "files": {"create": ["one.txt"]}, "verification": {"command": "true"}}]}`, 0o644)
	m.run(m.zerg, "plan", "--graph", "graph.json")
	os.Remove(filepath.Join(m.top, "graph.json"))
	m.run("git", "add", ".zerg")
	m.run("git", "commit", "-q", "--no-verify", "-m", "zerg")
	cmd := exec.Command(m.zerg, "lock", "shared.txt")
	cmd.Dir = m.top
	cmd.Env = append(cleanEnv(), append(m.env, "ZERG_WORKER=alice")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("lock: %v\n%s", err, out)
	}
}

// mend is what a rush does first (Mend), with the test's git-zerg: it
// must have something to mend, saying what, and then nothing more.
func (m *managers) mend(want string) {
	m.t.Helper()
	s, err := gitstore.Open(context.Background(), m.top)
	if err != nil {
		m.t.Fatal(err)
	}
	why, _, err := Mend(context.Background(), s, m.zerg)
	if err != nil || !strings.Contains(why, want) {
		m.t.Errorf("Mend: %q, %v; want %q", why, err, want)
	}
	if why, _, err := Mend(context.Background(), s, m.zerg); why != "" || err != nil {
		m.t.Errorf("Mend again: %q, %v; want nothing to mend", why, err)
	}
}

// setUp is a repository whose manager's configuration (file, committed)
// is in place and that is git-zerg's, its hooks not installed yet.
func setUp(t *testing.T, bin, path, file, config string) *managers {
	t.Helper()
	m := newManagers(t, bin, path)
	m.write(file, config, 0o644)
	m.commit(file)
	m.zergInit()
	return m
}

func hookManagers(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, err := agenttest.Install(context.Background(), filepath.Join("..", agenttest.HookManagers))
	if err != nil {
		t.Skipf("husky and lefthook not installed, and npm could not install them: %v", err)
	}
	return agenttest.BinDir(dir)
}

func TestHusky(t *testing.T) {
	bin := buildZerg(t)
	path := hookManagers(t)
	setup := func(t *testing.T) *managers {
		return setUp(t, bin, path, ".husky/pre-commit", "echo husky >> \"$HOOK_LOG\"\n")
	}
	t.Run("husky first", func(t *testing.T) {
		m := setup(t)
		m.run("husky")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install", "husky")
		m.run("husky") // npm install runs it again
		m.bothRun("after husky ran again", "husky")
	})
	t.Run("git-zerg first", func(t *testing.T) {
		m := setup(t)
		m.run(m.zerg, "hooks", "install")
		m.run("husky")
		// husky's core.hooksPath takes git elsewhere: said, and mended as
		// a rush mends it before its workers start.
		if out := m.run(m.zerg, "status"); !strings.Contains(out, "core.hooksPath is relative (.husky/_)") {
			t.Errorf("status after husky: %s", out)
		}
		m.mend("core.hooksPath is now relative (.husky/_)")
		m.bothRun("after the mend", "husky")
		m.run("husky")
		m.bothRun("after husky ran again", "husky")
		// Uninstall leaves husky as husky left it.
		m.run(m.zerg, "hooks", "uninstall")
		if got := strings.TrimSpace(m.run("git", "config", "--get", "core.hooksPath")); got != ".husky/_" {
			t.Errorf("core.hooksPath after uninstall: %q", got)
		}
	})
}

func TestLefthook(t *testing.T) {
	bin := buildZerg(t)
	path := hookManagers(t)
	setup := func(t *testing.T) *managers {
		return setUp(t, bin, path, "lefthook.yml", "pre-commit:\n  commands:\n    log:\n      run: echo lefthook >> \"$HOOK_LOG\"\n")
	}
	t.Run("lefthook first", func(t *testing.T) {
		m := setup(t)
		m.run("lefthook", "install")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install", "lefthook")
		// lefthook moves a hook that is not its own aside, where it does
		// not run it: said, and mended as a rush mends it, keeping one
		// lefthook hook and no stale copy of git-zerg's.
		m.run("lefthook", "install")
		if out := m.run(m.zerg, "status"); !strings.Contains(out, "pre-commit in ") || !strings.Contains(out, "is not git-zerg's hook") {
			t.Errorf("status after lefthook ran again: %s", out)
		}
		m.mend("another hook manager moved git-zerg's pre-commit hook to pre-commit.old")
		m.bothRun("after the mend", "lefthook")
		if _, err := os.Stat(filepath.Join(m.top, ".git", "hooks", "pre-commit.old")); err == nil {
			t.Error("git-zerg's hook moved aside by lefthook is still there")
		}
		// And lefthook can install again: nothing of git-zerg's is in its way.
		m.run("lefthook", "install")
	})
	t.Run("git-zerg first", func(t *testing.T) {
		m := setup(t)
		m.run(m.zerg, "hooks", "install")
		m.run("lefthook", "install")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install", "lefthook")
	})
	t.Run("relative core.hooksPath", func(t *testing.T) {
		// lefthook installs into a relative core.hooksPath when forced.
		m := setup(t)
		m.run("git", "config", "core.hooksPath", ".lefthook-hooks")
		m.run("lefthook", "install", "--force")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install", "lefthook")
	})
}

func TestPreCommitFramework(t *testing.T) {
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Skip("pre-commit is not installed (Debian's package pre-commit)")
	}
	bin := buildZerg(t)
	setup := func(t *testing.T) *managers {
		return setUp(t, bin, "", ".pre-commit-config.yaml", `repos:
- repo: local
  hooks:
  - id: log
    name: log
    entry: sh -c 'echo pre-commit >> "$HOOK_LOG"'
    language: system
    pass_filenames: false
    always_run: true
`)
	}
	t.Run("pre-commit first", func(t *testing.T) {
		m := setup(t)
		m.run("pre-commit", "install")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install", "pre-commit")
		// pre-commit installs itself again over git-zerg's hook, keeping it
		// as pre-commit.legacy, which it runs: the kept copy of pre-commit's
		// own hook behind git-zerg's is not run a second time.
		m.run("pre-commit", "install")
		m.bothRun("after pre-commit install again", "pre-commit")
	})
	t.Run("git-zerg first", func(t *testing.T) {
		m := setup(t)
		m.run(m.zerg, "hooks", "install")
		m.run("pre-commit", "install")
		m.bothRun("after pre-commit install", "pre-commit")
		m.run(m.zerg, "hooks", "install")
		m.bothRun("after git zerg hooks install again", "pre-commit")
		// Uninstall puts nothing back that pre-commit would run: its hook
		// stays and runs alone.
		m.run(m.zerg, "hooks", "uninstall")
		os.Remove(m.log)
		m.write("other.txt", "x", 0o644)
		m.run("git", "add", "other.txt")
		m.run("git", "commit", "-q", "-m", "other")
		if b, _ := os.ReadFile(m.log); string(b) != "pre-commit\n" {
			t.Errorf("after uninstall, pre-commit's hook logged %q", b)
		}
	})
}
