package proc

import (
	"errors"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// LookProgram finds the program a shell command line runs first: the first
// word of its first simple command, after assignments (FOO=bar),
// redirections and the wrappers exec, env, command and nohup. It returns
// the program's path, or an error wrapping exec.ErrNotFound (or another
// reason it cannot run) when it is not on PATH.
//
// It refuses only what it understands: when the program is a shell builtin
// or keyword, comes from an expansion ($AGENT, $(...), a glob), is a path
// relative to a directory not known here (./agent.sh), or the line does not
// parse (an open quote), it returns "" and no error, and the shell will
// tell when the command runs.
func LookProgram(command string) (string, error) {
	words, ok := firstCommand(command)
	if !ok {
		return "", nil
	}
	name, _, ok := programWord(words)
	if !ok {
		return "", nil
	}
	if strings.Contains(name, "/") && !strings.HasPrefix(name, "/") {
		return "", nil
	}
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		return path, nil // the shell runs it from the current directory
	}
	return path, err
}

// LocalScript is the file of the work tree a shell command line runs first,
// as a slash-separated path relative to the directory it runs in, or "":
// the program itself when it is a relative path (./work.sh, bin/agent), or
// the first argument of a shell or interpreter that is not an option (sh
// work.sh, python3 tools/run.py). A worker runs in a worktree made from
// the branch, so such a file must be committed there, not only present in
// the user's checkout.
func LocalScript(command string) string {
	words, ok := firstCommand(command)
	if !ok {
		return ""
	}
	name, rest, ok := programWord(words)
	if !ok {
		return ""
	}
	if relativePath(name) {
		return path.Clean(name)
	}
	// The options that take the program as text, not from a file.
	var inline []string
	switch path.Base(name) {
	case "sh", "bash", "dash", "zsh", "ksh":
		inline = []string{"-c"}
	case "python", "python3":
		inline = []string{"-c", "-m"}
	case "node", "ruby", "perl", "deno", "bun":
		inline = []string{"-e", "-E", "--eval", "-p", "--print"}
	default:
		return ""
	}
	for _, w := range rest {
		switch {
		case w.redir || w.assign:
			return ""
		case !w.literal:
			return ""
		case w.text == "-" || w.text == "--":
			return ""
		case strings.HasPrefix(w.text, "-"):
			if slices.Contains(inline, w.text) {
				return ""
			}
			continue
		}
		if strings.HasPrefix(w.text, "/") || strings.HasPrefix(w.text, "~") {
			return ""
		}
		return path.Clean(w.text)
	}
	return ""
}

// relativePath: a path with a directory part that is not absolute or the
// home directory.
func relativePath(p string) bool {
	return strings.Contains(p, "/") && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~")
}

// word is one shell word with its quotes removed.
type word struct {
	text    string
	literal bool // no expansion or glob: text is what the shell sees
	assign  bool // NAME=value, the name unquoted
	redir   bool // a redirection operator (its target is the next word)
}

// programWord walks past assignments, redirections and wrappers to the
// word naming the program, and returns the words after it; ok is false
// when it cannot be known.
func programWord(words []word) (string, []word, bool) {
	i := 0
	next := func() (word, bool) {
		for i < len(words) {
			w := words[i]
			i++
			switch {
			case w.redir:
				i++ // its target
			case w.assign:
			default:
				return w, true
			}
		}
		return word{}, false
	}
	w, ok := next()
	for ok {
		if !w.literal {
			return "", nil, false
		}
		switch w.text {
		case "exec", "command", "nohup", "env":
			wrapper := w.text
			w, ok = next()
			if !ok {
				if wrapper == "exec" || wrapper == "command" {
					return "", nil, false // no program: a shell builtin's job
				}
				return wrapper, nil, true
			}
			w, ok = skipOptions(wrapper, w, next)
			continue
		}
		if isShellWord(w.text) {
			return "", nil, false
		}
		return w.text, words[i:], w.text != ""
	}
	return "", nil, false
}

// skipOptions skips a wrapper's options, and env's assignments; ok is
// false when an option makes the program unknowable.
func skipOptions(wrapper string, w word, next func() (word, bool)) (word, bool) {
	ok := true
	for ok && w.literal && strings.HasPrefix(w.text, "-") && w.text != "-" {
		opt := w.text
		w, ok = next()
		if opt == "--" {
			break
		}
		switch wrapper {
		case "exec":
			if opt == "-a" && ok {
				w, ok = next()
			}
		case "command":
			if opt != "-p" {
				return word{}, false // -v and -V only ask
			}
		case "env":
			switch opt {
			case "-u", "--unset", "-C", "--chdir":
				if ok {
					w, ok = next()
				}
			}
			if strings.HasPrefix(opt, "-S") || strings.HasPrefix(opt, "--split-string") {
				return word{}, false
			}
		}
	}
	if wrapper == "env" {
		for ok && w.literal && strings.Contains(w.text, "=") {
			w, ok = next() // env takes NAME=value with any quoting
		}
		if ok && w.text == "-" {
			w, ok = next()
		}
	}
	return w, ok
}

// isShellWord tells the builtins and keywords of POSIX sh and the shells
// that stand in for it: a command starting with one runs no program first.
// A switch, not a map that every start of the program would build.
func isShellWord(w string) bool {
	switch w {
	case "!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then",
		"until", "while", "time", "function", "select", "coproc", "[[", ".", ":", "[", "alias", "bg",
		"break", "builtin", "cd", "continue", "echo", "eval", "exit", "export", "false", "fc", "fg",
		"getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read", "readonly", "return",
		"set", "shift", "source", "test", "times", "trap", "true", "type", "ulimit", "umask",
		"unalias", "unset", "wait":
		return true
	}
	return false
}

// firstCommand splits the first simple command of a shell line into words.
// ok is false when the line starts with something other than a simple
// command (a subshell) or does not parse.
func firstCommand(line string) ([]word, bool) {
	var words []word
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || (line[i] == '\\' && i+1 < len(line) && line[i+1] == '\n')) {
			if line[i] == '\\' {
				i++
			}
			i++
		}
		if i == len(line) {
			return words, true
		}
		switch c := line[i]; {
		case c == '#' || c == ';' || c == '&' || c == '|' || c == '\n' || c == ')':
			return words, true
		case c == '(':
			return nil, false
		}
		if n := redirection(line[i:]); n > 0 {
			words = append(words, word{text: line[i : i+n], literal: true, redir: true})
			i += n
			continue
		}
		w, n, ok := shellWord(line[i:])
		if !ok {
			return nil, false
		}
		words = append(words, w)
		i += n
	}
}

// redirection is the length of a redirection operator at the start of s
// (2>, >>, <&, 2>&, <<-, &> is not POSIX), or 0.
func redirection(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == len(s) || (s[i] != '<' && s[i] != '>') {
		return 0
	}
	j := i + 1
	for j < len(s) && j < i+3 && strings.IndexByte("<>&|-", s[j]) >= 0 {
		j++
	}
	return j
}

// shellWord reads one word at the start of s: its text unquoted, how many
// bytes it took, and ok false when a quote or substitution is left open.
func shellWord(s string) (word, int, bool) {
	var b strings.Builder
	w := word{literal: true}
	unquotedName := true // all so far is an unquoted name: NAME= is an assignment
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|()<>", c) >= 0:
			w.text = b.String()
			return w, i, true
		case c == '\\':
			if i+1 == len(s) {
				return w, 0, false
			}
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			unquotedName = false
			i += 2
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return w, 0, false
			}
			b.WriteString(s[i+1 : i+1+end])
			unquotedName = false
			i += end + 2
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				switch s[j] {
				case '\\':
					if j+1 < len(s) && strings.IndexByte("$`\"\\\n", s[j+1]) >= 0 {
						j++
						if s[j] != '\n' {
							b.WriteByte(s[j])
						}
						continue
					}
				case '$', '`':
					w.literal = false
					n, ok := substitution(s[j:])
					if !ok {
						return w, 0, false
					}
					j += n - 1
					continue
				}
				b.WriteByte(s[j])
			}
			if j == len(s) {
				return w, 0, false
			}
			unquotedName = false
			i = j + 1
		case c == '$' || c == '`':
			w.literal = false
			n, ok := substitution(s[i:])
			if !ok {
				return w, 0, false
			}
			unquotedName = false
			i += n
		case c == '=' && unquotedName && b.Len() > 0:
			w.assign = true
			unquotedName = false
			b.WriteByte(c)
			i++
		default:
			if strings.IndexByte("*?[", c) >= 0 || (c == '~' && b.Len() == 0) {
				w.literal = false
			}
			if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' && b.Len() > 0) {
				unquotedName = false
			}
			b.WriteByte(c)
			i++
		}
	}
	w.text = b.String()
	return w, i, true
}

// substitution is the length of the $... or `...` at the start of s, or ok
// false when it is left open. Quotes inside $(...) are honoured roughly:
// enough to find its end in a command line, not to run it.
func substitution(s string) (int, bool) {
	if s[0] == '`' {
		end := strings.IndexByte(s[1:], '`')
		return end + 2, end >= 0
	}
	if len(s) < 2 {
		return 1, true
	}
	switch s[1] {
	case '{':
		end := strings.IndexByte(s, '}')
		return end + 1, end >= 0
	case '(':
		depth := 0
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					return i + 1, true
				}
			case '\\':
				i++
			case '\'':
				end := strings.IndexByte(s[i+1:], '\'')
				if end < 0 {
					return 0, false
				}
				i += end + 1
			case '"':
				for i++; i < len(s) && s[i] != '"'; i++ {
					if s[i] == '\\' {
						i++
					}
				}
				if i >= len(s) {
					return 0, false
				}
			}
		}
		return 0, false
	}
	n := 1
	for n < len(s) && (s[n] == '_' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	if n == 1 && strings.IndexByte("@*#?-$!0123456789", s[1]) >= 0 {
		n = 2
	}
	return n, true
}
