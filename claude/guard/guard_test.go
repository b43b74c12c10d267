package guard

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
		{cmd: "git update-ref refs/heads/zerg/demo/staging HEAD", want: reasonStaging},
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
		g := Guard{Worker: c.worker, WorkerDir: workerDirs, Alias: testAlias, Branch: testBranch}
		if got := g.Check(c.cmd); got != c.want {
			t.Errorf("Check(%q) worker=%v\n got: %q\nwant: %q", c.cmd, c.worker, got, c.want)
		}
	}
}

// The repository's aliases, as git config would answer, and its
// checkouts: staging-wt/ has staging checked out, anywhere else main.
var testAliases = map[string]string{"x": "update-ref", "br": "branch", "ci": "commit", "st": "status",
	"lg": "log --oneline", "sx": "!git update-ref refs/zerg/locks HEAD", "ok": "!git status && make test"}

func testAlias(dir, name string) (string, bool) {
	v, ok := testAliases[name]
	return v, ok
}

func testBranch(dir string) string {
	if strings.Contains(dir, "staging-wt") {
		return "zerg/demo/staging"
	}
	return "main"
}

// What the shell lets a session write besides update-ref by name: aliases,
// refs it cannot see, fetch and push refspecs, the git directory by
// redirection, settings in the environment, staging moved by checkout or
// reset, replace refs. Each refusal comes with the ordinary commands next
// to it that must still pass.
func TestGuardOtherWays(t *testing.T) {
	cases := []struct{ cmd, want string }{
		// Aliases: on the command line, in the repository's config (the
		// stand-in above), and setting one.
		{"git -c alias.x=update-ref x refs/zerg/features/demo HEAD", reasonRefs},
		{"git -c alias.y='update-ref refs/zerg/locks' y HEAD", reasonRefs},
		{"git -c alias.y='!git update-ref -d refs/zerg/locks' y", reasonRefs},
		{`git -c alias.y='!sh -c "git commit --no-verify -m x"' y`, reasonNoVerify},
		{"git --config-env=alias.y=CMD y", reasonAlias},
		{"git x refs/zerg/features/demo HEAD", reasonRefs},
		{`git x "$R" HEAD`, reasonHidden},
		{"git sx", reasonRefs},
		{"git br -f zerg/demo/worker-1 HEAD", reasonBranches},
		{"git ci --no-verify -m x", reasonNoVerify},
		{"git config alias.y update-ref", reasonAlias},
		{"git config --global alias.y 'update-ref'", reasonAlias},
		{"git config set alias.y symbolic-ref", reasonAlias},
		{"git config alias.y 'replace --graft'", reasonAlias},
		{`git config alias.y '!git update-ref "$1" HEAD'`, reasonHidden},
		{"git config alias.y 'commit --no-verify'", reasonNoVerify},
		{"git config alias.y '-c core.hooksPath=/dev/null commit'", reasonHooksPath},
		{"git config alias.y '!git -c core.hooksPath=/dev/null commit'", reasonHooksPath},
		{`git config alias.y "$V"`, reasonHidden},
		{"git x refs/heads/topic HEAD", ""}, // update-ref of a ref of the user's, as if typed
		{"git lg refs/zerg/features/demo", ""},
		{"git st", ""},
		{"git ok", ""},
		{"git -c alias.y=log y refs/zerg/locks", ""},
		{"git config alias.lg 'log --oneline --graph'", ""},
		{"git config --global alias.co checkout", ""},
		{"git config --get alias.x", ""},

		// Refs the guard cannot see.
		{`git update-ref "$R" HEAD`, reasonHidden},
		{"git update-ref $(echo refs/zerg/locks) HEAD", reasonHidden},
		{"git update-ref `echo refs/zerg/locks` HEAD", reasonHidden},
		{`git update-ref -d "${REF}"`, reasonHidden},
		{"git update-ref refs/zer?/locks HEAD", reasonHidden},
		{`git symbolic-ref "$R" refs/heads/main`, reasonHidden},
		{`git branch -f "$B" HEAD`, reasonHidden},
		{"git branch -D $(git branch --list 'zerg/*')", reasonHidden},
		{`git push origin "$SPEC"`, reasonHidden},
		{"git push --force origin $(cat specs)", reasonHidden},
		{`git fetch . "$SPEC"`, reasonHidden},
		{"echo refs/zerg/locks | xargs git update-ref -d", reasonHidden},
		{"git $CMD refs/zerg/locks HEAD", reasonHidden},
		{"$(git --exec-path)/git-update-ref refs/zerg/locks HEAD", reasonRefs},
		{`git-update-ref "$R" HEAD`, reasonHidden},
		{`git update-ref refs/heads/topic "$(git rev-parse HEAD)"`, ""}, // the value, not the ref
		{`git push origin "$(git branch --show-current)"`, ""},
		{"git push -u origin $(git rev-parse --abbrev-ref HEAD)", ""},
		{`git checkout -b "feature/$NAME"`, ""},
		{`git branch "topic-$N"`, ""},
		{`git update-ref "refs/heads/feature-$N" HEAD`, ""},
		{`git update-ref "refs/heads/$B" HEAD`, reasonHidden},
		{`git push origin "HEAD:feature/$N"`, ""},
		{`git push origin "feature/$N"`, reasonHidden}, // $N may bring :refs/zerg/...
		{`git branch -D "old-$N"`, ""},
		{`git checkout "feature/$N" && git reset --hard origin/main`, ""},
		{`git log "$REF"`, ""},
		{"git symbolic-ref --short HEAD", ""},
		{"ls *.go | xargs git add", ""},
		{"git diff --name-only | xargs git checkout --", ""},
		{"git branch --list 'zerg/*' | xargs git branch -D", reasonHidden},
		{"git checkout - && git reset --hard HEAD~1", reasonStaging}, // the branch before may be staging

		// Fetch and push refspecs that write git-zerg's refs.
		{"git fetch . HEAD:refs/zerg/features/demo", reasonRefs},
		{"git fetch . +topic:zerg/demo/staging", reasonStaging},
		{"git fetch origin 'refs/zerg/*:refs/zerg/*'", reasonRefs},
		{"git fetch origin main:refs/replace/abc", reasonReplace},
		{"git fetch --refmap='+refs/heads/*:refs/zerg/x/*' origin main", reasonRefs},
		{"git pull . topic:refs/heads/zerg/demo/worker-1", reasonBranches},
		{"git push . HEAD:refs/zerg/locks", reasonRefs},
		{"git push . HEAD:zerg/demo/staging", reasonStaging},
		{"git push origin HEAD:zerg/demo/staging", reasonStaging},
		{"git push origin zerg/demo/staging", reasonStaging},
		{"git push --force-with-lease origin refs/zerg/locks", reasonForcePush},
		{"git config remote.origin.fetch '+refs/heads/*:refs/zerg/features/*'", reasonRefs},
		{"git fetch origin", ""},
		{"git fetch origin main", ""},
		{"git fetch origin main:refs/remotes/origin/main", ""},
		{"git fetch --all --prune", ""},
		{"git pull --rebase origin main", ""},
		{"git push origin topic:topic", ""},
		{"git push . HEAD:refs/heads/topic", ""},
		{"git config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'", ""},

		// The git directory and git's config files, by redirection and by
		// the programs that write files.
		{"echo 'secret.env' >> .git/info/exclude", reasonGitDir},
		{`printf '*\n' > "$(git rev-parse --git-dir)/info/exclude"`, reasonGitDir},
		{"cat evil.sh > .git/hooks/pre-commit", reasonGitDir},
		{"echo x > ../main/.git/config", reasonGitDir},
		{"tee -a .git/info/exclude <<< '*.env'", reasonGitDir},
		{"cp /tmp/hook .git/hooks/pre-push", reasonGitDir},
		{"cp /tmp/hook -t .git/hooks", reasonGitDir},
		{"mv .git/hooks/pre-commit /tmp/", reasonGitDir},
		{"ln -sf /dev/null .git/hooks/pre-commit", reasonGitDir},
		{"chmod -x .git/hooks/pre-commit", reasonGitDir},
		{"rm .git/hooks/pre-push", reasonGitDir},
		{"cd .git && echo '*' > info/exclude", reasonGitDir},
		{`cd "$(git rev-parse --git-common-dir)" && rm -rf zerg`, reasonGitDir},
		{"echo 'gitdir: /tmp/elsewhere' > .git", reasonGitDir},
		{"echo '[alias] y = update-ref' >> ~/.gitconfig", reasonGitDir},
		{"cat extra >> $GIT_DIR/config", reasonGitDir},
		{"sed -i 's/hooksPath/x/' .git/config", reasonGitDir},
		{"touch .git/zerg/run/demo/T1/pgid", reasonGitDir},
		{"echo x > /repo/.git/zerg/run/../../hooks/note.md", reasonGitDir},
		{"cat .git/config", ""},
		{"cp .git/hooks/pre-commit /tmp/saved", ""},
		{"sed -n 1p .git/HEAD", ""},
		{"rm -f .git/index.lock", ""},
		{"echo x > .gitignore && echo y >> .github/workflows/ci.yml", ""},
		{"cat > /repo/.git/zerg/run/demo/T1/note.md <<'EOF'\nkept the old API\nEOF", ""},
		{"echo done > build.log 2>&1", ""},

		// Settings given in the environment or with -c.
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m x", reasonConfigEnv},
		{"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.y GIT_CONFIG_VALUE_0=update-ref git y refs/zerg/a HEAD", reasonConfigEnv},
		{"export GIT_CONFIG_KEY_0=core.hookspath; git commit -m x", reasonConfigEnv},
		{`GIT_CONFIG_PARAMETERS="'core.hooksPath'='/dev/null'" git commit -m x`, reasonConfigEnv},
		{"GIT_CONFIG_GLOBAL=/tmp/cfg git push origin main", reasonConfigEnv},
		{"GIT_CONFIG_KEY_0=$K GIT_CONFIG_VALUE_0=$V GIT_CONFIG_COUNT=1 git commit -m x", reasonConfigEnv},
		{"git -c core.hooksPath=/dev/null status", reasonHooksPath},
		{"git -c core.hookspath=/tmp merge topic", reasonHooksPath},
		{"git --config-env=core.hooksPath=H commit -m x", reasonHooksPath},
		{"git -c include.path=/tmp/x commit -m x", reasonConfigInclude},
		{"git config include.path /tmp/evil", reasonConfigInclude},
		{"git config --global includeIf.gitdir:~/src/.path /tmp/x", reasonConfigInclude},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' git status", ""},
		{"git -c user.name=x commit -m y", ""},
		{"git config user.email a@example.com", ""},
		{"git config --get include.path", ""},

		// Staging: moved by force-creating it, or by what moves the branch
		// checked out once it is.
		{"git checkout -B zerg/demo/staging", reasonStaging},
		{"git checkout -B zerg/demo/worker-2 HEAD", reasonBranches},
		{"git checkout -Bzerg/demo/worker-2", reasonBranches},
		{"git checkout -fB zerg/demo/worker-2 HEAD", reasonBranches},
		{"git switch -qC zerg/demo/worker-2", reasonBranches},
		{"git worktree add -Bzerg/demo/worker-1 ../x", reasonBranches},
		{"git checkout -qf main", ""},
		{"git switch -c topic", ""},
		{"git switch -C zerg/demo/staging origin/main", reasonStaging},
		{"git switch --force-create=zerg/demo/worker-1", reasonBranches},
		{"git checkout zerg/demo/staging", reasonStaging},
		{"git switch zerg/demo/staging", reasonStaging},
		{"git checkout -b zerg/demo/staging", reasonStaging},
		{"git branch zerg/demo/staging HEAD~3", reasonStaging},
		{"git branch -f zerg/demo/staging HEAD", reasonBranches},
		{"git worktree add ../x zerg/demo/staging", reasonStaging},
		{"git worktree add -B zerg/demo/worker-1 ../x", reasonBranches},
		{"cd staging-wt && git reset --hard HEAD~1", reasonStaging},
		{"git -C staging-wt reset --keep abc123", reasonStaging},
		{"git -C staging-wt commit -m x", reasonStaging},
		{"git -C staging-wt merge topic", reasonStaging},
		{"git -C staging-wt update-ref HEAD abc123", reasonStaging},
		{"git -C staging-wt branch -m renamed", reasonStaging},
		{`git checkout "$B" && git reset --hard origin/main`, reasonStaging},
		{"git switch zerg/demo/worker-1 && git commit --amend -m x", ""},
		{"git switch --detach zerg/demo/staging", ""},
		{"git checkout --detach zerg/demo/staging", ""},
		{"git checkout zerg/demo/staging -- a.txt", ""},
		{"git log zerg/demo/staging", ""},
		{"git diff zerg/demo/staging...HEAD", ""},
		{"git reset --hard HEAD~1", ""},
		{"git -C staging-wt reset HEAD a.txt", ""},
		{"git -C staging-wt reset -- a.txt", ""},
		{"git -C staging-wt status", ""},
		{"git checkout main && git reset --hard origin/main", ""},
		{"git branch --list 'zerg/*/staging'", ""},
		{"git merge zerg/demo/staging", ""},
		{"git rebase zerg/demo/staging", ""},
		{"git checkout -b topic", ""},
		{"git worktree add --detach ../x zerg/demo/staging", ""},

		// Replace refs and what feeds refs on stdin.
		{"git replace abc123 def456", reasonReplace},
		{"git replace -d abc123", reasonReplace},
		{"git replace --graft HEAD", reasonReplace},
		{"git update-ref refs/replace/abc123 def456", reasonReplace},
		{"git fast-import < dump", reasonHiddenInput},
		{"git fast-import <<EOF\ncommit refs/zerg/locks\nEOF", reasonRefs},
		{"git update-ref --stdin < refs.txt", reasonHiddenInput},
		{"cat refs.txt | git update-ref --stdin", reasonHiddenInput},
		{"git filter-branch --tree-filter true -- --all", reasonRefs},
		{"git send-pack --force ../other HEAD:refs/zerg/locks", reasonRefs},
		{"git update-ref --stdin <<'EOF'\nupdate refs/heads/topic abc123\nEOF", ""},
		{"git replace -l", ""},
		{"git replace", ""},
		{"git notes add -m 'reviewed' HEAD", ""}, // notes change no tree, and git-zerg reads none

		// Commands run by other commands, and settings that outlive them.
		{`echo "git update-ref -d refs/zerg/locks" | sh`, reasonRefs},
		{"printf 'git commit --no-verify -m x' | bash -s", reasonNoVerify},
		{"printf 'update refs/heads/topic abc123\n' | git update-ref --stdin", ""},
		{`find . -name x -exec git update-ref refs/zerg/locks HEAD \;`, reasonRefs},
		{"find .git/hooks -type f -delete", reasonGitDir},
		{"find . -name '*.orig' -delete", ""},
		{"find . -name '*.go' -exec gofmt -l {} +", ""},
		{"git rebase -x 'git commit --amend --no-verify --no-edit' main", reasonNoVerify},
		{"git rebase --update-refs main", reasonBranches},
		{"git -c rebase.updateRefs=true rebase main", reasonBranches},
		{"git config rebase.updateRefs true", reasonBranches},
		{"git submodule foreach 'git update-ref refs/zerg/locks HEAD'", reasonRefs},
		{"git bisect run sh -c 'git commit -n -m x'", reasonNoVerify},
		{"git rebase -x 'go test ./...' main", ""},
		{"git submodule foreach git status", ""},
		{"git bisect run go test ./...", ""},
		{"git update-ref REFS/ZERG/locks HEAD", reasonRefs}, // one file on a case-insensitive file system
		{"git config core.excludesFile /tmp/ignore-all", reasonExcludes},
		{"git config core.fsmonitor /tmp/daemon", reasonConfigProgram},
		{"git config --global credential.helper '!cat >/tmp/creds'", reasonConfigProgram},
		{"git config filter.lfs.smudge 'sh /tmp/x'", reasonConfigProgram},
		{"git config diff.pdf.textconv /tmp/x", reasonConfigProgram},
		{"git -c core.pager=cat log", ""}, // for this one command, which the session runs anyway
		{"git config diff.tool vimdiff", ""},
		{"git config pull.rebase true", ""},
	}
	for _, c := range cases {
		g := Guard{WorkerDir: func(string) bool { return false }, Alias: testAlias, Branch: testBranch}
		if got := g.Check(c.cmd); got != c.want {
			t.Errorf("Check(%q)\n got: %q\nwant: %q", c.cmd, got, c.want)
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
	for _, s := range []string{"git commit -n", "a $(b `c` \"d\") <<E\nx\nE", "'", "\"", "$(", "`", "<<", "\\",
		"git config alias.y '>x'", "git -c alias.y= y", "git checkout --orphan=", "git fetch --refmap", "git worktree add -b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Guard{Worker: true, WorkerDir: func(string) bool { return true }}.Check(s)
		Guard{WorkerDir: func(string) bool { return false }, Alias: testAlias, Branch: testBranch}.Check(s)
	})
}
