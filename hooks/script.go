package hooks

import (
	"strings"
)

// Script returns the hook script for name (pre-commit or pre-push) running
// git-zerg at exe.
//
// What the script does, in order:
//  1. runs <name>.zerg-legacy, the hook that was there before, when it is
//     executable (git ignores non-executable hooks, and so do we), with the
//     same arguments and, for pre-push, the same stdin (read once and fed
//     to both); its failure aborts the commit or push with its exit code;
//  2. stops there when GIT_ZERG_INTERNAL is set: git-zerg made this commit
//     or push itself and checks its own work;
//  3. runs `git-zerg hook <name>`: first at the path recorded at install,
//     then whatever git-zerg is on PATH;
//  4. when neither exists, prints one warning and lets the commit or push
//     through. A removed tool must never brick a repository, and nothing is
//     lost: `done` and the staging merge check the same rules again.
func Script(name, exe string) []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(marker + "\n")
	b.WriteString("# Written by `git zerg hooks install`; `git zerg hooks uninstall` removes it and\n")
	b.WriteString("# puts back the hook that was here before (kept as " + name + legacySuffix + ", run first).\n")
	b.WriteString("# If git-zerg is gone (neither at the path below nor on PATH), this hook warns\n")
	b.WriteString("# and lets the " + verb(name) + " through: a removed tool never blocks a repository.\n")
	b.WriteString("# Commits and pushes git-zerg makes itself (GIT_ZERG_INTERNAL set) skip the check.\n")
	b.WriteString("zerg=" + shellQuote(exe) + "\n")
	b.WriteString("legacy=\"$0" + legacySuffix + "\"\n")
	if name == "pre-push" {
		// $(cat) drops the final newline; every line git sends ends in one.
		b.WriteString("input=$(cat)\n")
		b.WriteString("feed() { if [ -n \"$input\" ]; then printf '%s\\n' \"$input\"; fi; }\n")
		b.WriteString("if [ -x \"$legacy\" ]; then\n\tfeed | \"$legacy\" \"$@\" || exit $?\nfi\n")
	} else {
		b.WriteString("if [ -x \"$legacy\" ]; then\n\t\"$legacy\" \"$@\" || exit $?\nfi\n")
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
func recordedBinary(script []byte) string {
	for _, line := range strings.Split(string(script), "\n") {
		if q, ok := strings.CutPrefix(line, "zerg='"); ok {
			if q, ok = strings.CutSuffix(q, "'"); ok {
				return strings.ReplaceAll(q, `'\''`, "'")
			}
		}
	}
	return ""
}
