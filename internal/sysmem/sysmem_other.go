//go:build !linux

package sysmem

func machine() Limit {
	return Limit{Bytes: Fallback, Source: "the default where the machine's memory is unknown"}
}
