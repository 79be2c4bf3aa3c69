package golden

import "testing"

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		same      bool
	}{
		{`{"w2":0.5,"a":[1,2]}`, `{"w2":0.5,"a":[1,2]}`, true},
		{`x 1.0000000000001 y`, `x 1.0000000000002 y`, true},
		{`x 1.5 y`, `x 1.6 y`, false},
		{`x 1 y`, `z 1 y`, false},
		{`x 1 y`, `x 1 y 2`, false},
		{`NaN -Inf`, `NaN -Inf`, true},
		{`NaN`, `0`, false},
		{`a 1e-200`, `a 0`, false},
		{`a 2.5e-323`, `a 0`, true},
		{`end.`, `end!`, false},
	} {
		if d := Diff(tc.want, tc.got); (d == "") != tc.same {
			t.Errorf("Diff(%q, %q) = %q", tc.want, tc.got, d)
		}
	}
}
