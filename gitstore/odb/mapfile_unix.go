//go:build unix

package odb

import (
	"os"
	"runtime"
	"syscall"
)

// MapFile maps a file read-only and hands it to parse: a claim reads a few
// lines of an index of many megabytes, where reading it whole costs a page
// fault for every page of a fresh buffer. The mapping goes when what parse
// returned is unreachable, so nothing parse keeps may outlive that. The
// file is never changed in place (its writers rename a new one over it), so the
// mapping keeps what was read.
func MapFile[T any](name string, parse func([]byte) (*T, error)) (*T, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size <= 0 || size != int64(int(size)) {
		return readWhole(name, parse)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readWhole(name, parse)
	}
	v, err := parse(data)
	if err != nil || v == nil {
		syscall.Munmap(data)
		return nil, err
	}
	runtime.AddCleanup(v, func(b []byte) { syscall.Munmap(b) }, data)
	return v, nil
}

func readWhole[T any](name string, parse func([]byte) (*T, error)) (*T, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return parse(b)
}
