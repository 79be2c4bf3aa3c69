package ot

// firstBelowGo is the portable version of firstBelow.
func firstBelowGo(row, pd []float32, thr float32) int {
	pd = pd[:len(row)]
	for k := 0; k+8 <= len(row); k += 8 {
		r, q := row[k:k+8:k+8], pd[k:k+8:k+8]
		if r[0]-q[0] < thr || r[1]-q[1] < thr || r[2]-q[2] < thr || r[3]-q[3] < thr ||
			r[4]-q[4] < thr || r[5]-q[5] < thr || r[6]-q[6] < thr || r[7]-q[7] < thr {
			return k
		}
	}
	return len(row)
}
