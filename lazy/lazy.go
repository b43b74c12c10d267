// Package lazy holds package-level values built on first use.
//
// Every start of git-zerg, a hook's included, pays for the package
// initialisation of everything it links. A sync.OnceValue at package level
// is a call made there; a Value written as a composite literal is laid out
// by the compiler and costs nothing until Get.
package lazy

import "sync"

// Value is a value built once by Build, on the first Get. Write it as
// &lazy.Value[T]{Build: func() T {...}}, never copy it.
type Value[T any] struct {
	once  sync.Once
	Build func() T
	v     T
}

// Get builds the value on the first call and returns it.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.Build() })
	return l.v
}

// Func is a function run once, on the first Do. Write it as
// &lazy.Func{Run: func() {...}}, never copy it.
type Func struct {
	once sync.Once
	Run  func()
}

// Do runs Run on the first call; every call returns once it has run.
func (f *Func) Do() { f.once.Do(f.Run) }
