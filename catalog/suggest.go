package catalog

import "strings"

// suggest returns the known key closest to an unknown one when it is close
// enough to be a typo, or "".
func suggest(key string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	k := norm(key)
	best, bestDist := "", len(k)/3+1
	if bestDist < 2 {
		bestDist = 2
	}
	for _, candidate := range known {
		c := norm(candidate)
		if c == k {
			return candidate
		}
		dist := editDistance(k, c)
		if strings.Contains(c, k) && len(k) >= 4 || strings.Contains(k, c) && len(c) >= 4 {
			dist = min(dist, bestDist) // a prefix or part of a key counts as close
		}
		if dist < bestDist || dist == bestDist && best == "" {
			best, bestDist = candidate, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
