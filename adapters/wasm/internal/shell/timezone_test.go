package shell

import (
	"testing"
	"time"
)

func TestParseTZ(t *testing.T) {
	at := time.Unix(0, 0)
	tests := []struct{ tz, want string }{
		{"UTC", "00:00 UTC +0000"},
		{"UTC0", "00:00 UTC +0000"},
		{":UTC", "00:00 UTC +0000"},
		{"GMT", "00:00 GMT +0000"},
		{"EST5", "19:00 EST -0500"},
		{"JST-9", "09:00 JST +0900"},
		{"<+0530>-5:30", "05:30 +0530 +0530"},
		// Daylight saving rules, glibc's default (the US rules) when none
		// is given: wanted lines from glibc's date.
		{"EST5EDT", "19:00 EST -0500"},
		{"CET-1CEST", "01:00 CET +0100"},
		{"AEST-10AEDT-11,M10.5.0,M3.5.0", "11:00 AEDT +1100"},
		// A zone's name needs the host's zone data (Options.Zone): UTC
		// without it (the bash tool has it: see adapters/wasm).
		{"America/New_York", "00:00 UTC +0000"},
		{"garbage!", "00:00 UTC +0000"},
		// An invalid rule (month 13): UTC, where glibc makes EDT of it.
		{"EST5EDT,M13.1.0,M1.1.0", "00:00 UTC +0000"},
	}
	for _, tt := range tests {
		got := strftime("%H:%M %Z %z", at.In(parseTZ(tt.tz)))
		if got != tt.want {
			t.Errorf("TZ=%s: %q, want %q", tt.tz, got, tt.want)
		}
	}
	summer := time.Unix(1025524800, 0) // 2002-07-01 12:00 UTC
	for tz, want := range map[string]string{
		"EST+05EDT,M4.1.0,M10.5.0":         "08:00 EDT -0400",
		"CET-1CEST,M3.5.0,M10.5.0/3":       "14:00 CEST +0200",
		"AEST-10AEDT-11,M10.5.0,M3.5.0":    "22:00 AEST +1000",
		"<-03>3<-02>,M3.5.0/-2,M10.5.0/-1": "10:00 -02 -0200",
	} {
		if got := strftime("%H:%M %Z %z", summer.In(parseTZ(tz))); got != want {
			t.Errorf("TZ=%s in July: %q, want %q", tz, got, want)
		}
	}
}
