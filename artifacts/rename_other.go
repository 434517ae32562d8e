//go:build !linux

package artifacts

// renameExclusive renames old to new, failing when new exists.
func renameExclusive(old, new string) error { return renameFallback(old, new) }
