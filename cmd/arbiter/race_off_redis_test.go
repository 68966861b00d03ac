//go:build !race

package main

// raceEnabled reports whether the tests run with the race detector; the arbiter
// binary the end-to-end tests build then has it too.
const raceEnabled = false
