package catalog

import "strings"

// suggest returns the known key (or value) a user most likely meant by an
// unknown one, or "" when none is close enough.
//
// Keys are words joined by underscores, and a user who gets one wrong
// usually gets its words right but misspells one, leaves one out or adds
// one (refresh_intervall for refresh_check_interval). Counting edits over
// the whole string favours keys of a similar length instead: the shared
// refresh_ makes refresh_jitter_max 5 edits from refresh_interval, and the
// missing check_ 6. So candidates are compared word by word first: the
// best is the one whose words match the most letters of the typed words
// (each word matched to at most one word of the candidate, allowing a
// typo or two by its length), then the one with the fewest words left
// over, then the one fewest edits away; but one edit from the whole key
// beats all that. A word matches a word it abbreviates or that
// abbreviates it (dir, directory). A candidate is close enough when
// its matched words make up more than half of the typed letters, or when
// the whole strings are a few edits apart (a missing underscore:
// refreshmode).
func suggest(key string, known []string) string {
	k := normKey(key)
	kw := strings.Split(k, "_")
	best, bestScore := "", closeness{}
	for _, candidate := range known {
		c := normKey(candidate)
		if c == k {
			return candidate
		}
		s := compareKeys(k, kw, c)
		if !s.closeEnough(kw, len(k)) {
			continue
		}
		if best == "" || s.better(bestScore) {
			best, bestScore = candidate, s
		}
	}
	return best
}

// normKey folds case and reads - as _.
func normKey(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

// closeness is how close a candidate is to a typed key.
type closeness struct {
	matched int // letters of the typed words that match a word of the candidate
	extra   int // words of the candidate that no typed word matched
	dist    int // edits between the whole strings
}

// compareKeys compares the typed key k (its words kw) with candidate c.
func compareKeys(k string, kw []string, c string) closeness {
	cw := strings.Split(c, "_")
	used := make([]bool, len(cw))
	s := closeness{dist: editDistance(k, c), extra: len(cw)}
	for _, w := range kw {
		bestJ, bestD := -1, wordTypos(w)+1
		for j, v := range cw {
			d := editDistance(w, v)
			if d >= bestD && abbreviates(w, v) {
				d = wordTypos(w) // dir for directory, or the reverse
			}
			if !used[j] && d < bestD {
				bestJ, bestD = j, d
			}
		}
		if bestJ >= 0 {
			used[bestJ] = true
			s.matched += len(w)
			s.extra--
		}
	}
	return s
}

// abbreviates reports whether one of two words, of at least three
// letters, starts the other.
func abbreviates(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 3 && strings.HasPrefix(b, a)
}

// wordTypos is how many edits a typed word may be from a candidate's word
// and still match it: none for one or two letters, one up to five, two
// beyond.
func wordTypos(w string) int {
	switch {
	case len(w) <= 2:
		return 0
	case len(w) <= 5:
		return 1
	}
	return 2
}

// closeEnough reports whether s makes its candidate a suggestion for a key
// of words kw and length n.
func (s closeness) closeEnough(kw []string, n int) bool {
	letters := 0
	for _, w := range kw {
		letters += len(w)
	}
	return 2*s.matched > letters || s.dist <= max(2, n/3)
}

// better reports whether s is closer than t. One edit away from the whole
// key (a letter dropped, doubled or swapped, two words run together) beats
// any word count.
func (s closeness) better(t closeness) bool {
	switch {
	case (s.dist <= 1) != (t.dist <= 1):
		return s.dist <= 1
	case s.matched != t.matched:
		return s.matched > t.matched
	case s.extra != t.extra:
		return s.extra < t.extra
	}
	return s.dist < t.dist
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and transpositions of two
// neighbours (endpiont) each count one.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
