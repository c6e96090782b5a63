package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "256MiB": 256 << 20, "1 GiB": 1 << 30, "10KB": 10000, "4K": 4096, "2G": 2 << 30, "7B": 7} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "1.5MiB", "MiB", "99999999999999999999", "8EiB", "5GiB5"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for _, n := range []int64{1, 1000, 1024, 1536, 256 << 20, 3 << 30, 1<<20 + 1} {
		if got, err := Parse(Format(n)); err != nil || got != n {
			t.Errorf("Parse(Format(%d)) = %d, %v (%q)", n, got, err, Format(n))
		}
	}
	if Format(256<<20) != "256MiB" || Format(1000) != "1000" {
		t.Fatal(Format(256<<20), Format(1000))
	}
}
