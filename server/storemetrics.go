package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voicearbiter/arbiter/arbiter"
)

// InstrumentStore returns st counting every Load, Save and Watch in m
// (arbiter_store_requests_total by op and result, arbiter_store_request_seconds by op):
// the store round trips the Service makes and the compare-and-set conflicts it loses
// (op save, result conflict; each one is a retry of the step). A transition's read
// that the store answers from its local cache (arbiter.CachedLoader, a hit) counts as
// op load_cached, a miss as load; so load_cached / (load_cached + load) is the cache's
// hit rate (load also counts the fresh reads of read-only requests). The result is a
// CachedLoader whether st is or not (without one, LoadCached is Load). Ping and Close
// pass through uncounted (the health loop pings). With a nil m it returns st itself.
func InstrumentStore(st arbiter.Store, m *Metrics) arbiter.Store {
	if m == nil {
		return st
	}
	is := &instrumentedStore{Store: st}
	for i, op := range []string{"load", "save", "watch", "load_cached"} {
		is.ops[i] = storeOp{time: m.storeTime.WithLabelValues(op)}
		for r, name := range storeResults {
			is.ops[i].results[r] = m.storeOps.WithLabelValues(op, name)
		}
	}
	return is
}

// storeResults are the result label's values, by the index resultOf gives.
var storeResults = [...]string{"ok", "not_found", "conflict", "unavailable", "error"}

// resultOf is err's index in storeResults.
func resultOf(err error) int {
	if err == nil {
		return 0
	}
	switch arbiter.KindOf(err) {
	case arbiter.NotFound:
		return 1
	case arbiter.Conflict:
		return 2
	case arbiter.Unavailable:
		return 3
	}
	return 4
}

// instrumentedStore is InstrumentStore's wrapper; its series are resolved once, so
// counting costs no label lookup.
type instrumentedStore struct {
	arbiter.Store
	ops [4]storeOp // load, save, watch, load_cached
}

type storeOp struct {
	time    prometheus.Observer
	results [len(storeResults)]prometheus.Counter
}

func (o *storeOp) done(began time.Time, err error) {
	o.time.Observe(time.Since(began).Seconds())
	o.results[resultOf(err)].Inc()
}

func (s *instrumentedStore) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	began := time.Now()
	sess, err := s.Store.Load(ctx, key)
	s.ops[0].done(began, err)
	return sess, err
}

// LoadCached implements arbiter.CachedLoader (see InstrumentStore).
func (s *instrumentedStore) LoadCached(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, bool, error) {
	cl, ok := s.Store.(arbiter.CachedLoader)
	if !ok {
		sess, err := s.Load(ctx, key)
		return sess, false, err
	}
	began := time.Now()
	sess, cached, err := cl.LoadCached(ctx, key)
	op := &s.ops[0]
	if cached {
		op = &s.ops[3]
	}
	op.done(began, err)
	return sess, cached, err
}

// Current implements arbiter.CachedLoader, counted as a load (a read round trip).
// Over a store without a cache it is false: the Service then loads afresh (it never
// asks, since LoadCached never answers from a cache there).
func (s *instrumentedStore) Current(ctx context.Context, sess *arbiter.Session) (bool, error) {
	cl, ok := s.Store.(arbiter.CachedLoader)
	if !ok {
		return false, nil
	}
	began := time.Now()
	cur, err := cl.Current(ctx, sess)
	s.ops[0].done(began, err)
	return cur, err
}

// Uncached implements arbiter.CachedLoader: the store's answer, false over a store
// without a cache.
func (s *instrumentedStore) Uncached(key arbiter.SessionKey) bool {
	cl, ok := s.Store.(arbiter.CachedLoader)
	return ok && cl.Uncached(key)
}

func (s *instrumentedStore) Save(ctx context.Context, sess *arbiter.Session, ttl time.Duration) error {
	began := time.Now()
	err := s.Store.Save(ctx, sess, ttl)
	s.ops[1].done(began, err)
	return err
}

func (s *instrumentedStore) Watch(ctx context.Context, key arbiter.SessionKey) (<-chan struct{}, func(), error) {
	began := time.Now()
	ch, stop, err := s.Store.Watch(ctx, key)
	s.ops[2].done(began, err)
	return ch, stop, err
}
