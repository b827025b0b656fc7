//go:build cgo

package main

// With cgo on, the probe links the C runtime: it is then dynamically
// linked, with an interpreter, and still a Go program making its own calls.
import _ "runtime/cgo"
