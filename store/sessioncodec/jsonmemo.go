package sessioncodec

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Decoding the JSON-shaped values of a record (a call's arguments, a job's result, a
// response's payload: map[string]any) with encoding/json was most of a decode, and a
// store decodes the whole session for every RPC: 1,024 calls are some 3,000 such
// values, most of them the same bytes RPC after RPC (they never change once made). A
// process-wide memo keeps the value decoded from each recent byte string and hands out
// a deep copy of it (fresh maps and slices: the caller owns what it gets, exactly as
// from json.Unmarshal), which costs a fraction of parsing. Values that do not decode
// are not kept (each decode reports its error).

// memoMax bounds the memo's entries (each a small value and its bytes; past it the
// memo starts again empty), memoMaxBytes the length of a value it keeps.
const (
	memoMax      = 1 << 14
	memoMaxBytes = 4 << 10
)

// memoHits and memoMisses count the values the memo answered and those it did not
// (tests).
var memoHits, memoMisses atomic.Uint64

var memo = struct {
	sync.RWMutex
	m map[string]map[string]any
}{m: map[string]map[string]any{}}

// decodeJSONObject decodes b (a JSON object) as json.Unmarshal into a
// map[string]any does, through the memo.
func decodeJSONObject(b []byte) (map[string]any, error) {
	if len(b) > memoMaxBytes {
		var v map[string]any
		err := json.Unmarshal(b, &v)
		return v, err
	}
	memo.RLock()
	v, ok := memo.m[string(b)]
	memo.RUnlock()
	if ok {
		memoHits.Add(1)
		return copyObject(v), nil
	}
	memoMisses.Add(1)
	if err := json.Unmarshal(b, &v); err != nil {
		return v, err
	}
	if v != nil {
		memo.Lock()
		if len(memo.m) >= memoMax {
			clear(memo.m)
		}
		memo.m[string(b)] = v
		memo.Unlock()
		v = copyObject(v)
	}
	return v, nil
}

// copyObject returns a deep copy of a value json.Unmarshal made: maps and slices are
// new, strings, numbers, booleans and nil are values.
func copyObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyObject(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
