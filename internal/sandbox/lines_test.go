package sandbox

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestReadLinesCapCounts checks that a capped read delivers the first lines
// of an uncapped one and counts every other line as dropped, whatever
// falls where the cap is reached: over-long lines, carriage returns, a
// last line without a newline.
func TestReadLinesCapCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"short\n", "\n", "a\rb\n", strings.Repeat("L", MaxLineLength+100) + "\n",
		strings.Repeat("M", 3*MaxLineLength) + "\n", strings.Repeat("x", 99) + "\n", "tail"}
	for i := range 300 {
		var b bytes.Buffer
		for range rng.IntN(40) {
			p := pieces[rng.IntN(len(pieces))]
			if p == "tail" {
				p = "partial"
			}
			b.WriteString(p)
		}
		if i%3 == 0 {
			b.WriteString("no newline at the end")
		}
		var all []string
		readLines(bytes.NewReader(b.Bytes()), Stdout, &lineSink{fn: func(_ Stream, l string) { all = append(all, l) }})
		for _, limit := range []int{1, 2, 5, len(all) - 1, len(all), len(all) + 1} {
			if limit < 1 {
				continue
			}
			var got []string
			sink := &lineSink{fn: func(_ Stream, l string) { got = append(got, l) }, max: limit}
			readLines(bytes.NewReader(b.Bytes()), Stdout, sink)
			want := all[:min(limit, len(all))]
			if !slices.Equal(got, want) {
				t.Fatalf("input %d, cap %d: delivered %d lines, want the first %d", i, limit, len(got), len(want))
			}
			if got, want := sink.dropped, len(all)-len(want); got != want {
				t.Fatalf("input %d (%q…), cap %d: got %d dropped, want %d", i, b.String()[:min(b.Len(), 60)], limit, got, want)
			}
		}
	}
}
