package shell

import "testing"

func TestStat(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		{name: "format", files: f, cmd: fx("stat -c '%n %s %F %a %A %U %G %u %b %B %o %N' a.txt d d/e/empty s.sh"), stdout: "a.txt 8 regular file 644 -rw-r--r-- user user 1000 8 512 4096 'a.txt'\n" +
			"d 4096 directory 755 drwxr-xr-x user user 1000 8 512 4096 'd'\n" +
			"d/e/empty 0 regular empty file 644 -rw-r--r-- user user 1000 0 512 4096 'd/e/empty'\n" +
			"s.sh 8 regular file 755 -rwxr-xr-x user user 1000 8 512 4096 's.sh'\n"},
		{name: "times", files: f, cmd: fx("TZ=UTC stat -c '%y|%Y|%w|%W' a.txt"), match: `^2024-01-02 03:04:05\.000000000 [+-]\d{4}\|\d+\|-\|0\n$`},
		{name: "big blocks", files: f, cmd: fx("stat --format=%b:%s big"), stdout: "16:5000\n"},
		{name: "printf", files: f, cmd: fx(`stat --printf '%n\t%s\n' a.txt d/b.txt`), stdout: "a.txt\t8\nd/b.txt\t4\n"},
		{name: "default", files: f, cmd: fx("stat a.txt"), match: `^  File: a\.txt\n  Size: 8         \tBlocks: 8          IO Block: 4096   regular file\n` +
			`Device: \d+,\d+\tInode: \d+ +Links: 1\nAccess: \(0644/-rw-r--r--\)  Uid: \( 1000/    user\)   Gid: \( 1000/    user\)\n` +
			`Access: .*\nModify: 2024-01-02 03:04:05\.000000000 .*\nChange: .*\n Birth: -\n$`},
		{name: "terse", files: f, cmd: fx("stat -t a.txt"), match: `^a\.txt 8 8 81a4 1000 1000 [0-9a-f]+ \d+ 1 0 0 \d+ \d+ \d+ 0 4096\n$`},
		{name: "missing", cmd: "stat nope", code: 1, stderr: "stat: cannot statx 'nope': No such file or directory\n"},
		{name: "no operand", cmd: "stat", code: 1, stderr: "stat: missing operand\nTry 'stat --help' for more information.\n"},
	})
}
