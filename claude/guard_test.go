package claude

import (
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	workerDirs := func(dir string) bool { return strings.Contains(dir, "worker-") }
	type tc struct {
		cmd    string
		worker bool
		want   string // "" passes
	}
	cases := []tc{
		// Ordinary commands pass.
		{cmd: "git status", want: ""},
		{cmd: "go test ./...", want: ""},
		{cmd: `git add a.txt && ZERG_WORKER=w1 git commit -m "T1: write a" -- a.txt`, want: ""},
		{cmd: "git commit -am 'fix: no -n here'", want: ""},
		{cmd: "git commit -m -n", want: ""}, // -n is the message
		{cmd: "git commit -mn", want: ""},   // the message is "n"
		{cmd: "git commit -F -n", want: ""}, // a file named -n
		{cmd: "git commit --no-verify --verify -m x", want: ""},
		{cmd: "git push origin main", want: ""},
		{cmd: "git push -n origin main", want: ""}, // push -n is --dry-run
		{cmd: `echo "--no-verify"`, want: ""},
		{cmd: `echo git commit --no-verify`, want: ""},
		{cmd: `grep -r -- "--no-verify" docs/ | wc -l`, want: ""},
		{cmd: "cat <<'EOF' > notes.md\ngit commit --no-verify is refused\ngit update-ref refs/zerg/x HEAD\nEOF\ngit status", want: ""},
		{cmd: `git log --grep="update-ref refs/zerg"`, want: ""},
		{cmd: "git zerg status --json", want: ""},
		{cmd: "git zerg unlock --force src/a.go", want: ""}, // the user (driver) may break a lock
		{cmd: "git zerg unlock src/a.go", worker: true, want: ""},
		{cmd: "git push origin 'refs/zerg/*:refs/zerg/*'", want: ""}, // plain push of state: README "Sharing state"
		{cmd: "git fetch origin 'refs/zerg/*:refs/zerg-remotes/origin/*'", want: ""},
		{cmd: "git config core.hooksPath", want: ""},
		{cmd: "git config --get core.hooksPath", want: ""},
		{cmd: "git branch zerg/demo/notes", want: ""},
		{cmd: "git branch -D feature/old", want: ""},
		{cmd: "cat .git/refs/zerg/features/demo", want: ""},
		{cmd: "git merge --no-verify topic", want: ""},
		{cmd: "git show-ref | grep refs/zerg/", want: ""},
		{cmd: "echo $((1+2)) && git status # git commit --no-verify", want: ""},
		{cmd: "git commit -m \"$(cat <<'EOF'\nAdd feature (T1) and don't break things\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"", want: ""},
		{cmd: "git add -A && git commit -m \"$(cat <<'EOF'\nFix: it's (mostly) done\nEOF\n)\" && git push origin HEAD", want: ""},
		{cmd: "find . -name '*.go' | xargs grep -l 'refs/zerg' | head", want: ""},
		{cmd: "python3 -c 'print(\"--no-verify\")'", want: ""},
		{cmd: "npm test -- --no-verify", want: ""},

		// --no-verify and -n on commit and push.
		{cmd: "git commit --no-verify -m x", want: reasonNoVerify},
		{cmd: "git commit --no-veri -m x", want: reasonNoVerify},
		{cmd: "git commit -n -m x", want: reasonNoVerify},
		{cmd: "git commit -anm x", want: reasonNoVerify},
		{cmd: "git commit -m x -n", want: reasonNoVerify},
		{cmd: "git -C sub -c user.name=x commit --no-verify", want: reasonNoVerify},
		{cmd: "git push --no-verify origin main", want: reasonNoVerify},
		{cmd: "cd src && git add . && git commit --no-verify -m wip", want: reasonNoVerify},
		{cmd: "make build; git commit -n -m x", want: reasonNoVerify},
		{cmd: "make build || git commit -n -m x", want: reasonNoVerify},
		{cmd: "true | git commit -n -m x", want: reasonNoVerify},
		{cmd: "git status\ngit commit --no-verify -m x", want: reasonNoVerify},
		{cmd: `bash -c "git commit --no-verify -m x"`, want: reasonNoVerify},
		{cmd: `sh -ec 'cd a && git push --no-verify'`, want: reasonNoVerify},
		{cmd: `eval "git commit --no-verify -m x"`, want: reasonNoVerify},
		{cmd: `echo "$(git commit --no-verify -m x)"`, want: reasonNoVerify},
		{cmd: "echo `git commit -n -m x`", want: reasonNoVerify},
		{cmd: "env GIT_AUTHOR_NAME=x git commit -n -m y", want: reasonNoVerify},
		{cmd: "sudo -u me git commit --no-verify", want: reasonNoVerify},
		{cmd: "timeout 10 git push --no-verify", want: reasonNoVerify},
		{cmd: "bash <<'EOF'\ngit commit --no-verify -m x\nEOF", want: reasonNoVerify},
		{cmd: "git ci --no-verify -m x", want: reasonNoVerify}, // an alias, perhaps
		{cmd: "/usr/bin/git commit --no-verify", want: reasonNoVerify},
		{cmd: "git c\\ommit --no-verify", want: reasonNoVerify},
		{cmd: "git 'commit' \"--no-verify\"", want: reasonNoVerify},
		{cmd: "if true; then git commit -n -m x; fi", want: reasonNoVerify},
		{cmd: "(cd a; git commit -n -m x)", want: reasonNoVerify},
		{cmd: "git -c core.hooksPath=/dev/null commit -m x", want: reasonHooksPath},
		{cmd: "git config core.hooksPath /tmp/none", want: reasonHooksPath},
		{cmd: "git config --unset core.hooksPath", want: reasonHooksPath},

		// Writes to refs/zerg/.
		{cmd: "git update-ref refs/zerg/features/demo HEAD", want: reasonRefs},
		{cmd: "git update-ref -d refs/zerg/locks", want: reasonRefs},
		{cmd: "git update-ref -m fix refs/zerg/features/demo abc123 def456", want: reasonRefs},
		{cmd: "printf 'update refs/zerg/features/a %s\\n' x | git update-ref --stdin", want: reasonRefs},
		{cmd: "git update-ref --stdin <<EOF\ndelete refs/zerg/locks\nEOF", want: reasonRefs},
		{cmd: "git update-ref refs/heads/zerg/demo/staging HEAD", want: reasonBranches},
		{cmd: "git update-ref refs/heads/main HEAD", want: ""},
		{cmd: "echo 0000 > .git/refs/zerg/features/demo", want: reasonRefs},
		{cmd: "rm -rf .git/refs/zerg", want: reasonRefs},
		{cmd: "git branch -D zerg/demo/worker-1", want: reasonBranches},
		{cmd: "git branch -f zerg/demo/staging HEAD", want: reasonBranches},

		// Pushing state.
		{cmd: "git push origin +refs/zerg/features/demo:refs/zerg/features/demo", want: reasonForcePush},
		{cmd: "git push --force origin 'refs/zerg/*:refs/zerg/*'", want: reasonForcePush},
		{cmd: "git push -f origin refs/zerg/locks", want: reasonForcePush},
		{cmd: "git push origin :refs/zerg/features/demo", want: reasonForcePush},
		{cmd: "git push --delete origin refs/zerg/features/demo", want: reasonForcePush},
		{cmd: "git push --mirror backup", want: reasonMirror},
		{cmd: "git push origin 'refs/zerg/*:refs/zerg/*'", worker: true, want: reasonWorkerPush},
		{cmd: "ZERG_WORKER=w1 git push origin refs/zerg/locks", want: reasonWorkerPush},
		{cmd: "git push origin zerg/features/demo", worker: true, want: reasonWorkerPush},
		{cmd: "git push origin HEAD", worker: true, want: ""},

		// unlock --force from a worker.
		{cmd: "git zerg unlock --force src/a.go", worker: true, want: reasonWorkerUnlock},
		{cmd: "ZERG_WORKER=w2 git zerg unlock --force src/a.go", want: reasonWorkerUnlock},
		{cmd: "export ZERG_WORKER=w2; git zerg unlock --force src/a.go", want: reasonWorkerUnlock},
		{cmd: "ZERG_WORKER=w2; git zerg unlock src/a.go --force", want: reasonWorkerUnlock},
		{cmd: "env ZERG_WORKER=w2 git zerg -f demo unlock -force=true a", want: reasonWorkerUnlock},
		{cmd: "git-zerg unlock --force a", worker: true, want: reasonWorkerUnlock},
		{cmd: "git zerg -C ../wt/worker-1 unlock --force a", want: reasonWorkerUnlock},
		{cmd: "cd ../wt/worker-2 && git zerg unlock --force a", want: reasonWorkerUnlock},
		{cmd: "git -C ../wt/worker-2 zerg unlock --force a", want: reasonWorkerUnlock},
		{cmd: "ZERG_WORKER= git zerg unlock --force a", want: ""},
		{cmd: "git zerg unlock --force=false a", worker: true, want: ""},
	}
	for _, c := range cases {
		g := Guard{Worker: c.worker, WorkerDir: workerDirs}
		if got := g.Check(c.cmd); got != c.want {
			t.Errorf("Check(%q) worker=%v\n got: %q\nwant: %q", c.cmd, c.worker, got, c.want)
		}
	}
}

func TestParseShell(t *testing.T) {
	got := parseShell("A=1 git commit -m 'a b' \"c $(d e)\" 2>&1 >out.txt && x <<EOF | y\nbody $z\nEOF\nlast", 0)
	var lines []string
	for _, c := range got {
		lines = append(lines, strings.Join(c.words, "|")+" >"+strings.Join(c.redirs, ",")+" <"+strings.Join(c.stdin, ","))
	}
	want := []string{
		"A=1|git|commit|-m|a b|c $(d e) >out.txt <",
		"x > <body $z\n",
		"y > <",
		"last > <",
		"d|e > <",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// FuzzGuard: whatever the input, Check neither panics nor hangs.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{"git commit -n", "a $(b `c` \"d\") <<E\nx\nE", "'", "\"", "$(", "`", "<<", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Guard{Worker: true, WorkerDir: func(string) bool { return true }}.Check(s)
	})
}
