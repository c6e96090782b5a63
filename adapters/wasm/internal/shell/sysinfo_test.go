package shell

import (
	"strings"
	"testing"
	"time"
)

// Expected outputs come from GNU date (coreutils 9.1) with TZ=UTC and
// LC_ALL=C on the same inputs.

func TestDate(t *testing.T) {
	runTable(t, []tc{
		{name: "epoch", cmd: "date -d @0", stdout: "Thu Jan  1 00:00:00 UTC 1970\n"},
		{name: "epoch utc", cmd: "date -u -d @86400 +%F", stdout: "1970-01-02\n"},
		{name: "plus days", cmd: "date -d '2024-01-01 + 3 days'", stdout: "Thu Jan  4 00:00:00 UTC 2024\n"},
		{name: "conversions", cmd: "date -d '2024-02-29 10:00:00' '+%c|%x|%X|%r|%D|%e|%j|%U|%V|%G|%g|%u|%w|%W|%p|%P|%I|%l|%k|%C|%h|%s|%N|%3N|%z|%:z|%::z|%Z|%-d|%_m|%^a|%#Z|%10Y|%-j|%q'",
			stdout: "Thu Feb 29 10:00:00 2024|02/29/24|10:00:00|10:00:00 AM|02/29/24|29|060|08|09|2024|24|4|4|09|AM|am|10|10|10|20|Feb|1709200800|000000000|000|+0000|+00:00|+00:00:00|UTC|29| 2|THU|utc|0000002024|60|1\n"},
		{name: "more conversions", cmd: "date -d '2024-01-07 23:05:09' '+%a %A %b %B %d %H %M %S %y %Y %m %F %T %R %n%t%% %_d %-m %U %W %V'",
			stdout: "Sun Sunday Jan January 07 23 05 09 24 2024 01 2024-01-07 23:05:09 23:05 \n\t%  7 1 01 01 01\n"},
		{name: "unknown conversion", cmd: "date -d @0 '+%K %'", stdout: "%K %\n"},
		{name: "invalid", cmd: "date -d 'not a date'", code: 1, stderr: "date: invalid date 'not a date'\n"},
		{name: "invalid x", cmd: "date -d x", code: 1, stderr: "date: invalid date 'x'\n"},
		{name: "feb 30", cmd: "date -d 2024-02-30", code: 1, stderr: "date: invalid date '2024-02-30'\n"},
		{name: "hour 25", cmd: "date -d 25:00", code: 1, stderr: "date: invalid date '25:00'\n"},
		{name: "iso seconds", cmd: "date -Iseconds -d @0", stdout: "1970-01-01T00:00:00+00:00\n"},
		{name: "iso", cmd: "date -I -d @0", stdout: "1970-01-01\n"},
		{name: "iso long", cmd: "date --iso-8601=minutes -d @0", stdout: "1970-01-01T00:00+00:00\n"},
		{name: "rfc email", cmd: "date -R -d @0", stdout: "Thu, 01 Jan 1970 00:00:00 +0000\n"},
		{name: "rfc 3339", cmd: "date --rfc-3339=ns -d @0", stdout: "1970-01-01 00:00:00.000000000+00:00\n"},
		{name: "tz fixed", cmd: "TZ=EST5 date -d @0", stdout: "Wed Dec 31 19:00:00 EST 1969\n"},
		{name: "tz utc flag", cmd: "TZ=EST5 date -u -d @0 +%H", stdout: "00\n"},
		{name: "tz named is utc", cmd: "TZ=Europe/Paris date -d @0 +%H:%Z", stdout: "00:UTC\n"},
		{name: "month name", cmd: "date -d 'Jan 5 2024' +%F", stdout: "2024-01-05\n"},
		{name: "day month", cmd: "date -d '5 Jan 2024' +%F", stdout: "2024-01-05\n"},
		{name: "month overflow", cmd: "date -d '2024-01-31 1 month' +%F", stdout: "2024-03-02\n"},
		{name: "compact", cmd: "date -d 20240102 +%F", stdout: "2024-01-02\n"},
		{name: "iso z", cmd: "date -d 2024-01-02T03:04:05Z", stdout: "Tue Jan  2 03:04:05 UTC 2024\n"},
		{name: "iso offset", cmd: "date -d 2024-01-02T03:04:05+02:00", stdout: "Tue Jan  2 01:04:05 UTC 2024\n"},
		{name: "minus hours", cmd: "date -d '2024-01-01 -2 hours'", stdout: "Sun Dec 31 22:00:00 UTC 2023\n"},
		{name: "fraction", cmd: "date -d @1.5 +%s.%N", stdout: "1.500000000\n"},
		{name: "fraction time", cmd: "date -d '2024-01-01 12:00:00.5' +%N", stdout: "500000000\n"},
		{name: "offset after time", cmd: "date -d '2024-01-01 10:00 +3 days'", stdout: "Tue Jan  2 07:00:00 UTC 2024\n"},
		{name: "own output", cmd: "date -d 'Tue Jan  2 03:04:05 UTC 2024'", stdout: "Tue Jan  2 03:04:05 UTC 2024\n"},
		{name: "weekday with date", cmd: "date -d '2024-03-10 next monday' +%F", stdout: "2024-03-10\n"},
		{name: "weeks ago", cmd: "date -d '2024-01-01 3 weeks ago' +%F", stdout: "2023-12-11\n"},
		{name: "pm", cmd: "date -d '10:30pm 2024-01-01'", stdout: "Mon Jan  1 22:30:00 UTC 2024\n"},
		{name: "slashes", cmd: "date -d '01/02/2024 5pm'", stdout: "Tue Jan  2 17:00:00 UTC 2024\n"},
		{name: "zone name", cmd: "date -d '2024-01-01 00:00 EST'", stdout: "Mon Jan  1 05:00:00 UTC 2024\n"},
		{name: "utc offset", cmd: "date -d 'UTC+2 2024-01-01'", stdout: "Sun Dec 31 22:00:00 UTC 2023\n"},
		{name: "month without day", cmd: "date -d 'Jan 2024'", code: 1, stderr: "date: invalid date 'Jan 2024'\n"},
		{name: "yesterday", cmd: `[ "$(date -d yesterday +%F)" = "$(date -d '1 day ago' +%F)" ] && [ "$(date -d '-1 day' +%F)" = "$(date -d yesterday +%F)" ]`},
		{name: "tomorrow", cmd: `[ "$(date -d tomorrow +%F)" = "$(date -d '+1 day' +%F)" ]`},
		{name: "now", cmd: `a=$(date +%s); b=$(date -d now +%s); [ $((b - a)) -le 1 ]`},
		{name: "reference", files: map[string]string{"f": "x"}, cmd: "date -r f +%Y", match: `^20\d\d\n$`},
		{name: "reference missing", cmd: "date -r nope", code: 1, stderr: "date: nope: No such file or directory\n"},
		{name: "file", files: map[string]string{"dates": "@0\n2024-01-02\nbad\n"}, cmd: "date -f dates +%F", code: 1,
			stdout: "1970-01-01\n2024-01-02\n", stderr: "date: invalid date 'bad'\n"},
		{name: "set", cmd: "date -s '2024-01-01'", code: 1, stderr: "date: cannot set date: Operation not permitted\n"},
		{name: "bad option", cmd: "date -Q", code: 1, stderr: "date: invalid option -- 'Q'\n"},
		{name: "two formats", cmd: "date +%F +%T", code: 1, stderr: "date: extra operand '+%T'\n"},
		{name: "bad iso", cmd: "date --iso-8601=weeks", code: 1, anyErr: true},
	})
}

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

func TestSysinfo(t *testing.T) {
	runTable(t, []tc{
		{name: "uname", cmd: "uname", stdout: "codeport\n"},
		{name: "uname all", cmd: "uname -a", stdout: "codeport sandbox wasip1 #1 wasm32 WASI\n"},
		{name: "uname parts", cmd: "uname -smo", stdout: "codeport wasm32 WASI\n"},
		{name: "uname processor", cmd: "uname -p", stdout: "unknown\n"},
		{name: "uname hostname", cmd: "HOSTNAME=box uname -n", stdout: "box\n"},
		{name: "uname bad", cmd: "uname -z", code: 1, anyErr: true},
		{name: "whoami", cmd: "whoami", stdout: "user\n"},
		{name: "whoami USER", cmd: "USER=alice whoami", stdout: "alice\n"},
		{name: "id", cmd: "id", stdout: "uid=1000(user) gid=1000(user) groups=1000(user)\n"},
		{name: "id u", cmd: "id -u; id -g; id -G; id -un; id -gn", stdout: "1000\n1000\n1000\nuser\nuser\n"},
		{name: "id consistent", cmd: `[ "$(id -un)" = "$(whoami)" ]`},
		{name: "id other user", cmd: "id root", code: 1, stderr: "id: 'root': no such user\n"},
		{name: "id two", cmd: "id -u -g", code: 1, stderr: "id: cannot print \"only\" of more than one choice\n"},
		{name: "hostname", cmd: "hostname", stdout: "sandbox\n"},
		{name: "hostname env", cmd: "HOSTNAME=a.b.c hostname -s", stdout: "a\n"},
		{name: "hostname set", cmd: "hostname x", code: 1, anyErr: true},
		{name: "nproc", cmd: "nproc; nproc --all", stdout: "1\n1\n"},
		{name: "nproc extra", cmd: "nproc x", code: 1, anyErr: true},
	})
}

func FuzzDateFormat(f *testing.F) {
	for _, s := range []string{"%Y-%m-%d", "%-_^#10z", "%:::z %N %3N %q", "%", "%E", "%::", "%99999999999d", "+%c"} {
		f.Add(s, int64(0), "2024-01-01 + 3 days")
	}
	f.Add("%s", int64(-1e12), "@-5.5")
	f.Add("%F", int64(1e12), "Tue Jan  2 03:04:05 UTC 2024")
	f.Fuzz(func(t *testing.T, format string, unix int64, when string) {
		if len(format) > 256 {
			return
		}
		tm := time.Unix(unix%(1<<40), 0).In(parseTZ("JST-9"))
		out := strftime(format, tm)
		if len(out) > 4200*len(format)+64 {
			t.Fatalf("output of %d bytes for a format of %d", len(out), len(format))
		}
		if !strings.Contains(format, "%") && out != format {
			t.Fatalf("a format without %% changed: %q -> %q", format, out)
		}
		now := time.Date(2026, 12, 1, 21, 0, 18, 0, time.UTC)
		if got, ok := parseDate(when, now, time.UTC); ok && got.Location() != time.UTC {
			t.Fatalf("parseDate(%q) not in the requested zone", when)
		}
		parseTZ(when)
	})
}

// parseTZ is the zone of a TZ value for a shell without a zone database.
func parseTZ(tz string) *time.Location { return (&Shell{}).location(tz) }
