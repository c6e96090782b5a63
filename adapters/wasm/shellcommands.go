package wasm

// shellCommands are the bash tool's commands besides the shell's builtins,
// as Describe lists them. The list is kept here rather than asked of the
// shell, whose code runs only in the guest and is not linked into the
// gateway; TestShellCommandsAreTheShells keeps it equal to the shell's.
var shellCommands = []string{
	"awk", "base32", "base64", "basename", "bash", "bc", "cat", "cd",
	"chmod", "cksum", "cmp", "column", "comm", "command", "cp", "cut",
	"date", "df", "diff", "dirname", "du", "echo", "env", "expand",
	"expr", "false", "file", "find", "fold", "grep", "gunzip", "gzip",
	"head", "hostname", "id", "join", "ln", "ls", "md5sum", "mkdir", "mv",
	"nl", "nproc", "od", "paste", "printenv", "printf", "pwd", "python",
	"python3", "readlink", "realpath", "rev", "rm", "rmdir", "sed", "seq",
	"sh", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum",
	"sleep", "sort", "split", "stat", "tac", "tail", "tar", "tee",
	"timeout", "touch", "tr", "trap", "tree", "true", "type", "umask", "uname", "unexpand",
	"uniq", "unzip", "wc", "which", "whoami", "xargs", "yes", "zcat",
	"zip",
}
