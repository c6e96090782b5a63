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
