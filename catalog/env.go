package catalog

import (
	"strings"
)

// envProblem is one reference expandEnv could not expand.
type envProblem struct {
	message, fix string
}

// expandEnv replaces every ${env:NAME} in s with the value of the
// environment variable NAME, looked up with lookup. "$${" stands for a
// literal "${". Any other ${...} reference (${secrets:X}, ${X}), an unset
// variable or an unterminated reference is reported and left in place; the
// caller then discards the value.
func expandEnv(s string, lookup func(string) (string, bool)) (string, []envProblem) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var (
		b        strings.Builder
		problems []envProblem
	)
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '$' { // "$${" is an escaped "${"
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			problems = append(problems, envProblem{
				message: "unterminated ${ reference",
				fix:     "close it with } as in ${env:NAME}, or write $${ for a literal ${",
			})
			b.WriteString(s[i:])
			break
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		value, p := resolveRef(ref, lookup)
		if p != nil {
			problems = append(problems, *p)
			b.WriteString("${" + ref + "}")
			continue
		}
		b.WriteString(value)
	}
	return b.String(), problems
}

// resolveRef resolves the inside of one ${...} reference.
func resolveRef(ref string, lookup func(string) (string, bool)) (string, *envProblem) {
	name, isEnv := strings.CutPrefix(ref, "env:")
	if !isEnv {
		fix := "use ${env:NAME} and set the environment variable NAME"
		if _, after, ok := strings.Cut(ref, ":"); ok && validEnvName(after) {
			fix = "use ${env:" + after + "} and set the environment variable " + after
		} else if validEnvName(ref) {
			fix = "write ${env:" + ref + "}"
		}
		return "", &envProblem{message: "${" + ref + "} is not supported: only ${env:NAME} references are expanded", fix: fix}
	}
	if !validEnvName(name) {
		return "", &envProblem{
			message: "${env:" + name + "} does not name an environment variable",
			fix:     "use letters, digits and _ only, not starting with a digit, as in ${env:PG_PASSWORD}",
		}
	}
	value, ok := lookup(name)
	if !ok {
		return "", &envProblem{
			message: "environment variable " + name + " is not set",
			fix:     "set " + name + " in pgaccel's environment, or write the value in the file",
		}
	}
	return value, nil
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
