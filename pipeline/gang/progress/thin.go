package progress

// LivePoints bounds the points of the series a running step's record
// holds (written every few seconds, so the UI draws its curves live); the
// whole series (at most MaxPoints) is written when each attempt ends.
const LivePoints = 200

// Thin returns at most n of points (n >= 2), evenly spaced, the first and
// the last kept; points itself when it has no more than n.
func Thin[P any](points []P, n int) []P {
	if n < 2 {
		n = 2
	}
	if len(points) <= n {
		return points
	}
	out := make([]P, 0, n)
	last := len(points) - 1
	for i := 0; i < n; i++ {
		out = append(out, points[i*last/(n-1)])
	}
	return out
}
