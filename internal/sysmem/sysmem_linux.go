package sysmem

import "syscall"

func machine() Limit {
	var as uint64
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &r) == nil && r.Cur != ^uint64(0) {
		as = r.Cur
	}
	return probe("/", as)
}
