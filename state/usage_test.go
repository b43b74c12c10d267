package state

import "testing"

// Below a cent a cost keeps two significant digits: a spending of $0.0042
// against a budget of $0.005 must not read "$0.00 of $0.01".
func TestUSD(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "$0.00"},
		{1, "$1.00"},
		{12.345, "$12.35"},
		{0.05, "$0.05"},
		{0.01, "$0.01"},
		{0.0042, "$0.0042"},
		{0.005, "$0.0050"},
		{0.000123, "$0.00012"},
		{1e-12, "$0.00000000"},
	} {
		if got := USD(tc.x); got != tc.want {
			t.Errorf("USD(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
