// Package hostmem tells how much memory this process may count on: the
// machine's, or less where a cgroup (a container's memory limit) caps it.
// The adapters size their default session limit from it, so that the
// sessions they admit fit in memory at their memory limit each, rather
// than a fixed count that overcommits a small container and wastes a
// large machine.
//
//	b := hostmem.Read()
//	n := hostmem.Fit(b.Bytes, 256<<20) // sessions of 256 MiB that fit
//	log.Printf("%d sessions fit in %s (%s)", n, b.Bytes, b.Source)
package hostmem
