package shell

import "testing"

func TestTree(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		{name: "default", files: f, cmd: fx("tree"), stdout: ".\n├── a.txt\n├── big\n├── d\n│\u00a0\u00a0 ├── b.txt\n│\u00a0\u00a0 └── e\n│\u00a0\u00a0     └── empty\n└── s.sh\n\n3 directories, 5 files\n"},
		{name: "-a -L", files: f, cmd: fx("tree -a -L 1 --noreport d ."), stdout: "d\n├── b.txt\n└── e\n.\n├── .h\n├── a.txt\n├── big\n├── d\n└── s.sh\n"},
		{name: "-d", files: f, cmd: fx("tree -d"), stdout: ".\n└── d\n    └── e\n\n3 directories\n"},
		{name: "-f", files: f, cmd: fx("tree -f d"), stdout: "d\n├── d/b.txt\n└── d/e\n    └── d/e/empty\n\n2 directories, 2 files\n"},
		{name: "-I", files: f, cmd: fx("tree -I '*.txt|big' ."), stdout: ".\n├── d\n│\u00a0\u00a0 └── e\n│\u00a0\u00a0     └── empty\n└── s.sh\n\n3 directories, 2 files\n"},
		{name: "-P", files: f, cmd: fx("tree -P '*.sh'"), stdout: ".\n├── d\n│\u00a0\u00a0 └── e\n└── s.sh\n\n3 directories, 1 file\n"},
		{name: "-F --dirsfirst", files: f, cmd: fx("tree -F --dirsfirst"), stdout: "./\n├── d/\n│\u00a0\u00a0 ├── e/\n│\u00a0\u00a0 │\u00a0\u00a0 └── empty\n│\u00a0\u00a0 └── b.txt\n├── a.txt\n├── big\n└── s.sh*\n\n3 directories, 5 files\n"},
		{name: "-h", files: f, cmd: fx("tree -h d"), stdout: "[4.0K]  d\n├── [   4]  b.txt\n└── [4.0K]  e\n    └── [   0]  empty\n\n2 directories, 2 files\n"},
		{name: "C order", files: map[string]string{"t/B": "", "t/C": "", "t/a": "", "t/b": ""}, cmd: "tree t", stdout: "t\n├── B\n├── C\n├── a\n└── b\n\n1 directory, 4 files\n"},
		{name: "missing", cmd: "tree nope", code: 2, stdout: "nope  [error opening dir]\n\n0 directories, 0 files\n"},
		{name: "file operand", files: f, cmd: fx("tree a.txt"), stdout: "a.txt  [error opening dir]\n\n0 directories, 1 file\n"},
	})
}
