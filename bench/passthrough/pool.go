package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Pooling earlier runs. On a shared machine one run's per-round ratios
// spread by ±0.1, so a median over 15 rounds is known to about ±0.05;
// `-pool a.md,b.md` reads the "Every run, TPS by round" tables of reports
// of the same cells and prints the per-round ratios of all of them
// together: median, quartiles, the rounds that reached 0.95, and a
// bootstrap interval of the median.

// poolRuns maps a case ("workload|clients") and a target to its TPS by
// round, the rounds of every file one after another.
type poolRuns map[string]map[string][]float64

// readRuns adds the TPS-by-round rows of a report to runs.
func readRuns(r io.Reader, runs poolRuns) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Every run, TPS by round"):
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			if len(runs) > 0 && strings.TrimSpace(line) != "" {
				in = false
			}
			continue
		}
		cols := strings.Split(strings.Trim(line, "| "), "|")
		if len(cols) < 4 || strings.TrimSpace(cols[0]) == "Workload" || strings.HasPrefix(strings.TrimSpace(cols[0]), "---") {
			continue
		}
		key := strings.TrimSpace(cols[0]) + "|" + strings.TrimSpace(cols[1])
		target := strings.TrimSpace(cols[2])
		if runs[key] == nil {
			runs[key] = map[string][]float64{}
		}
		for _, c := range cols[3:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
			if err != nil {
				return fmt.Errorf("%q: %w", line, err)
			}
			runs[key][target] = append(runs[key][target], v)
		}
	}
	return sc.Err()
}

// roundRatios are a's TPS over b's, round by round (in pooled files too:
// each has both targets' rounds of a case, so the rounds line up).
func roundRatios(a, b []float64) ratioSpread {
	var xs []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 {
			xs = append(xs, a[i]/b[i])
		}
	}
	return xs
}

// bootstrapMedian is a 90 % interval of the median of xs: the 5th and
// 95th percentiles of the medians of 2000 resamples (a fixed seed, so
// the same files give the same interval).
func bootstrapMedian(xs []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, 2000)
	s := make([]float64, len(xs))
	for i := range meds {
		for j := range s {
			s[j] = xs[rng.IntN(len(xs))]
		}
		meds[i] = median(s)
	}
	sort.Float64s(meds)
	return meds[len(meds)*5/100], meds[len(meds)*95/100-1]
}

// pool prints the pooled per-round ratios of the files' runs.
func pool(files []string, stdout io.Writer) error {
	runs := poolRuns{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		err = readRuns(fh, runs)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("no \"Every run, TPS by round\" table in %s", strings.Join(files, ", "))
	}
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(stdout, "Per-round TPS ratios of %s, pooled: median [quartiles]; rounds at 0.95 or more; 90 %% bootstrap interval of the median\n\n", strings.Join(files, ", "))
	fmt.Fprintln(stdout, "| Workload | Clients | Ratio | Rounds | Median [quartiles]; ≥0.95, ≥1 | Median, 90 % interval |")
	fmt.Fprintln(stdout, "|---|--:|---|--:|---|---|")
	pairs := [][2]string{{targetPgaccel, targetPlain}, {targetPlain, targetPgbouncer}, {targetPgaccel, targetPgbouncer}}
	for _, k := range keys {
		w, c, _ := strings.Cut(k, "|")
		for _, p := range pairs {
			a, okA := runs[k][p[0]]
			b, okB := runs[k][p[1]]
			if !okA || !okB {
				continue
			}
			xs := roundRatios(a, b)
			if len(xs) == 0 {
				continue
			}
			lo, hi := bootstrapMedian(xs)
			fmt.Fprintf(stdout, "| %s | %s | %s/%s | %d | %s | %.3f [%.3f, %.3f] |\n", w, c, p[0], p[1], len(xs), xs, median(xs), lo, hi)
		}
	}
	return nil
}
