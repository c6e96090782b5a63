package shell

import "testing"

func TestSeqFormat(t *testing.T) {
	for in, want := range map[string]string{
		"%g":        "%.6g",
		"f%03g.txt": "f%03.6g.txt",
		"%.2f":      "%.2f",
		"%%%e":      "%%%e",
		"%-8.3Lf|":  "%-8.3f|",
	} {
		got, err := seqFormat(in)
		if err != nil || got != want {
			t.Errorf("seqFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "%d", "%g%g", "%", "%s"} {
		if _, err := seqFormat(bad); err == nil {
			t.Errorf("seqFormat(%q) succeeded", bad)
		}
	}
}
