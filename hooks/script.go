package hooks

import (
	"strings"
)

// hookScript returns the hook script for name (pre-commit or pre-push) running
// git-zerg at exe, in git's hooks directory, after the hook that was there
// before (<name>.zerg-legacy beside it).
//
// What the script does, in order:
//  1. runs the hooks it chains (see scriptWith), when executable (git
//     ignores non-executable hooks, and so do we), with the same arguments
//     and, for pre-push, the same stdin (read once and fed to each); a
//     failure aborts the commit or push with its exit code;
//  2. stops there when GIT_ZERG_INTERNAL is set: git-zerg made this commit
//     or push itself and checks its own work;
//  3. runs `git-zerg hook <name>`: first at the path recorded at install,
//     then whatever git-zerg is on PATH;
//  4. when neither exists, prints one warning and lets the commit or push
//     through. A removed tool must never brick a repository, and nothing is
//     lost: `done` and the staging merge check the same rules again.
func hookScript(name, exe string) []byte { return scriptWith(name, exe, "") }

// scriptWith is Script chaining, before git-zerg's check, the hook kept
// beside it (<name>.zerg-legacy) and, when under is set, <under>/<name>:
// where a relative core.hooksPath that git-zerg's own directory stands in
// for (see own.go) has git look, resolved as git resolves it, from the top
// of the work tree the hook runs in.
//
// The kept hook is found by the hook's name, not by $0: a hook manager that
// installs after git-zerg may rename this script and run it from its own
// hook (the pre-commit framework keeps it as <name>.legacy). Then the kept
// hook may be that same manager's script from an earlier install, which
// would run the manager twice, or run into its refusal to run itself from
// its legacy hook; a kept hook with the same bytes as the one git runs is
// skipped for that reason.
func scriptWith(name, exe, under string) []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(marker + "\n")
	b.WriteString("# Written by `git zerg hooks install`; `git zerg hooks uninstall` removes it and\n")
	b.WriteString("# puts back the hook that was here before (kept as " + name + legacySuffix + ", run first).\n")
	if under != "" {
		b.WriteString("# core.hooksPath is relative (" + under + "): git-zerg's hooks directory stands in\n")
		b.WriteString("# for it in this worktree, and " + under + "/" + name + " runs first, as git would run it.\n")
	}
	b.WriteString("# If git-zerg is gone (neither at the path below nor on PATH), this hook warns\n")
	b.WriteString("# and lets the " + verb(name) + " through: a removed tool never blocks a repository.\n")
	b.WriteString("# Commits and pushes git-zerg makes itself (GIT_ZERG_INTERNAL set) skip the check.\n")
	b.WriteString("zerg=" + shellQuote(exe) + "\n")
	if under != "" {
		b.WriteString("under=" + shellQuote(under) + "\n")
	}
	b.WriteString("here=${0%/*}\n")
	b.WriteString("legacy=\"$here/" + name + legacySuffix + "\"\n")
	b.WriteString("if [ \"$0\" != \"$here/" + name + "\" ] && cmp -s \"$legacy\" \"$here/" + name + "\" 2>/dev/null; then\n\tlegacy=\nfi\n")
	run := "\"$1\" \"$@\""
	if name == "pre-push" {
		// $(cat) drops the final newline; every line git sends ends in one.
		b.WriteString("input=$(cat)\n")
		b.WriteString("feed() { if [ -n \"$input\" ]; then printf '%s\\n' \"$input\"; fi; }\n")
		run = "feed | " + run
	}
	b.WriteString("chain() {\n\tif [ -n \"$1\" ] && [ -x \"$1\" ]; then\n\t\th=$1\n\t\tshift\n\t\t" +
		strings.Replace(run, "\"$1\" \"$@\"", "\"$h\" \"$@\"", 1) + " || exit $?\n\tfi\n}\n")
	b.WriteString("chain \"$legacy\" \"$@\"\n")
	if under != "" {
		b.WriteString("chain \"$under/" + name + "\" \"$@\"\n")
	}
	b.WriteString("if [ -n \"$GIT_ZERG_INTERNAL\" ]; then\n\texit 0\nfi\n")
	b.WriteString("if [ ! -x \"$zerg\" ]; then\n\tzerg=$(command -v git-zerg 2>/dev/null) || zerg=\nfi\n")
	b.WriteString("if [ -z \"$zerg\" ]; then\n")
	b.WriteString("\techo \"git-zerg: not found; " + name + " checks skipped (git zerg hooks uninstall removes this hook)\" >&2\n")
	b.WriteString("\texit 0\nfi\n")
	if name == "pre-push" {
		b.WriteString("feed | \"$zerg\" hook " + name + " \"$@\"\n")
	} else {
		b.WriteString("exec \"$zerg\" hook " + name + " \"$@\"\n")
	}
	return []byte(b.String())
}

func verb(name string) string {
	if name == "pre-push" {
		return "push"
	}
	return "commit"
}

// shellQuote quotes s for sh in single quotes, each single quote in s
// closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// recordedBinary reads the git-zerg path back from a script.
func recordedBinary(script []byte) string { return recordedVar(script, "zerg") }

// recordedVar reads back a variable a script sets to a quoted value.
func recordedVar(script []byte, name string) string {
	for _, line := range strings.Split(string(script), "\n") {
		if q, ok := strings.CutPrefix(line, name+"='"); ok {
			if q, ok = strings.CutSuffix(q, "'"); ok {
				return strings.ReplaceAll(q, `'\''`, "'")
			}
		}
	}
	return ""
}

// recordedUnder reads back the relative core.hooksPath a script chains.
func recordedUnder(script []byte) string { return recordedVar(script, "under") }
