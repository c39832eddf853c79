package explain

// keptLines maps each line of b to the line of a it keeps (-1 for a line
// b adds or changes): the longest common subsequence, found by Myers'
// O(ND) greedy walk after the common head and tail are set aside. Past
// maxEdits differences the middle counts as rewritten whole, so a file
// replaced end to end costs no more than reading it.
func keptLines(a, b []string) []int {
	out := make([]int, len(b))
	for i := range out {
		out[i] = -1
	}
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		out[head] = head
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		out[len(b)-1-tail] = len(a) - 1 - tail
		tail++
	}
	am, bm := a[head:len(a)-tail], b[head:len(b)-tail]
	for _, p := range myers(am, bm) {
		out[head+p[1]] = head + p[0]
	}
	return out
}

// maxEdits bounds the walk: its saved frontiers grow as its square.
const maxEdits = 1000

// myers is the pairs (i, j) with a[i] == b[j] of a shortest edit script,
// or none past maxEdits.
func myers(a, b []string) [][2]int {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil
	}
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] is the frontier before step d, for diagonals -d-1..d+1.
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d)
			}
		}
	}
	return nil
}

// backtrack walks the saved frontiers back from (len(a), len(b)) and
// collects the diagonal moves, the lines kept.
func backtrack(trace [][]int, a, b []string, d int) [][2]int {
	var pairs [][2]int
	x, y := len(a), len(b)
	for ; d >= 0; d-- {
		v := func(k int) int { return trace[d][k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && v(k-1) < v(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v(pk)
		py := px - pk
		if d == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x, y = x-1, y-1
			pairs = append(pairs, [2]int{x, y})
		}
		x, y = px, py
	}
	return pairs
}
