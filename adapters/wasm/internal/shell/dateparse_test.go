package shell

import (
	"testing"
	"time"
)

// TestParseDateRelative checks the forms relative to now against GNU's
// answers for the time the host ran them (Tuesday 2026-12-01 21:00:18 UTC).
func TestParseDateRelative(t *testing.T) {
	now := time.Date(2026, 12, 1, 21, 0, 18, 0, time.UTC)
	tests := []struct{ in, want string }{
		{"1 day ago", "2026-11-30 21:00:18"},
		{"next monday", "2026-12-07 00:00:00"},
		{"monday", "2026-12-07 00:00:00"},
		{"last week", "2026-11-24 21:00:18"},
		{"3 weeks", "2026-12-22 21:00:18"},
		{"10:30", "2026-12-01 10:30:00"},
		{"tomorrow 10:30", "2026-12-02 10:30:00"},
		{"yesterday 10:00", "2026-11-30 10:00:00"},
		{"1 jan", "2026-01-01 00:00:00"},
		{"", "2026-12-01 00:00:00"},
		{"today", "2026-12-01 21:00:18"},
		{"-1 day", "2026-11-30 21:00:18"},
		{"+1 week 2 days", "2026-12-10 21:00:18"},
		{"last friday", "2026-11-27 00:00:00"},
		{"sat", "2026-12-05 00:00:00"},
		{"12am", "2026-12-01 00:00:00"},
		{"tuesday", "2026-12-01 00:00:00"},
		{"next tuesday", "2026-12-08 00:00:00"},
		{"2 hours ago", "2026-12-01 19:00:18"},
		{"next month", "2027-01-01 21:00:18"},
		{"1 year ago", "2025-12-01 21:00:18"},
	}
	for _, tt := range tests {
		got, ok := parseDate(tt.in, now, time.UTC)
		if !ok {
			t.Errorf("parseDate(%q) failed", tt.in)
			continue
		}
		if s := got.Format("2006-01-02 15:04:05"); s != tt.want {
			t.Errorf("parseDate(%q) = %s, want %s", tt.in, s, tt.want)
		}
	}
	for _, bad := range []string{"noon", "x", "1 fortnights ago ago", "2024-13-01", "@", "@abc", "99:99", "next", "+", "ago"} {
		if got, ok := parseDate(bad, now, time.UTC); ok {
			t.Errorf("parseDate(%q) = %v, want an error", bad, got)
		}
	}
}
