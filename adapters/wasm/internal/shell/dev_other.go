//go:build !unix

package shell

func devSys() any { return nil }

func nlink(fi interface{ Sys() any }) uint64 { return 1 }
