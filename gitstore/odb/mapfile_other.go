//go:build !unix

package odb

import "os"

// MapFile reads the file whole where there is no mmap.
func MapFile[T any](name string, parse func([]byte) (*T, error)) (*T, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return parse(b)
}
