module github.com/codeport/codeport

go 1.26
